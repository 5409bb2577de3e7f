package scenarios

import "testing"

func TestEnablesControllerReadsTheListAsTheControllerManagerDoes(t *testing.T) {
	cases := []struct {
		list string
		want bool
	}{
		{"*", true},
		{"*,bootstrapsigner,tokencleaner", true},
		{"*,bootstrapsigner,tokencleaner,-deployment-controller", false},
		{"-deployment-controller,*", false},
		{"bootstrapsigner,tokencleaner", false},
		{"deployment-controller,replicaset-controller", true},
		{"*, -deployment-controller", false},
	}
	for _, c := range cases {
		if got := EnablesController(c.list, "deployment-controller"); got != c.want {
			t.Errorf("EnablesController(%q) = %v, want %v", c.list, got, c.want)
		}
	}
}
