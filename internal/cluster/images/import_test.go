package images

import "testing"

func TestCRISnapshotter(t *testing.T) {
	cases := []struct{ name, config, want string }{
		{"containerd 2 (config version 3)", `version = 3
[plugins]
  [plugins."io.containerd.cri.v1.images"]
    snapshotter = "overlayfs"
  [plugins."io.containerd.grpc.v1.cri"]
    device_ownership_from_security_context = false
`, "overlayfs"},
		{"containerd 1.x (config version 2)", `version = 2
[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "fuse-overlayfs"
`, "fuse-overlayfs"},
		{"none named", "version = 3\n", ""},
		{"not toml", "version = = 3", ""},
	}
	for _, c := range cases {
		got, err := criSnapshotter(c.config)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}
