package nodeagent

import (
	"testing"

	"github.com/kafkachaos/kafkachaos/loadagent"
)

// The load agent listens on the IP the node agent gives it.
func TestPodIPEnvMatchesLoadAgent(t *testing.T) {
	if PodIPEnv != loadagent.PodIPEnv {
		t.Errorf("the node agent sets %s, the load agent reads %s", PodIPEnv, loadagent.PodIPEnv)
	}
}
