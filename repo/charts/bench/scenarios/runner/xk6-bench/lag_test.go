package bench

import "testing"

func TestPhaseAt(t *testing.T) {
	phases := []lagPhase{{Name: "step_01", StartMs: 0, EndMs: 1000}, {Name: "step_02", StartMs: 1000, EndMs: 2000}}
	for _, c := range []struct {
		ms   float64
		want string
	}{{0, "step_01"}, {999.9, "step_01"}, {1000, "step_02"}, {1999, "step_02"}, {2000, ""}, {-1, ""}} {
		if got := phaseAt(phases, c.ms); got != c.want {
			t.Errorf("phaseAt(%v) = %q, want %q", c.ms, got, c.want)
		}
	}
	if got := phaseAt(nil, 5); got != "" {
		t.Errorf("phaseAt(nil) = %q, want none", got)
	}
}

func TestSetLagPhasesCopies(t *testing.T) {
	list := []lagPhase{{Name: "a", StartMs: 0, EndMs: 10}}
	setLagPhases(list)
	list[0].Name = "changed"
	if got := phaseAt(lagPhases.Load().([]lagPhase), 5); got != "a" {
		t.Errorf("setLagPhases kept the caller's slice: %q", got)
	}
	setLagPhases(nil)
}
