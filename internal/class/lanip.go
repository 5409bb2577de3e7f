package class

import (
	"context"
	"net"
	"strconv"
	"strings"
)

// lanURL is the address learners type: the bound IP, or for a wildcard bind this machine's LAN address.
func lanURL(ctx context.Context, scheme string, addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return scheme + "://" + addr.String()
	}
	ip := tcp.IP
	if ip.IsUnspecified() {
		ip = lanIP(ctx)
	}
	return scheme + "://" + net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port))
}

// lanIP prefers the source address of the default route; a classroom switch without a router has none, so
// then it takes the first private IPv4 address of a physical-looking interface. Docker and kind bridges are
// skipped: learners cannot reach the instructor through them.
func lanIP(ctx context.Context) net.IP {
	// Dialling UDP sends nothing; it only asks the kernel which source address it would use.
	if c, err := (&net.Dialer{}).DialContext(ctx, "udp4", "192.0.2.1:9"); err == nil {
		defer func() { _ = c.Close() }()
		if a, ok := c.LocalAddr().(*net.UDPAddr); ok && !a.IP.IsLoopback() {
			return a.IP
		}
	}
	// Interfaces that cannot be listed leave loopback as the only honest answer.
	ifaces, _ := net.Interfaces()
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 || virtualInterface(iface.Name) {
			continue
		}
		addrs, _ := iface.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsPrivate() {
				return n.IP
			}
		}
	}
	return net.IPv4(127, 0, 0, 1)
}

func virtualInterface(name string) bool {
	for _, prefix := range []string{"docker", "br-", "veth", "virbr", "cni", "kind"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}
