package nodeagent

// AgentImage is the project's own image; on the local cluster it runs the
// kafkachaos binary.
const AgentImage = "ghcr.io/kafkachaos/kafkachaos"

// The node agent's env contract with the processes it runs, which share
// the host's network and PID namespace: PodIPEnv is the pod's own IP, to
// listen on (loadagent.PodIPEnv reads the same name), PodDirEnv a
// directory of the pod's own.
const (
	PodIPEnv  = "KAFKACHAOS_POD_IP"
	PodDirEnv = "KAFKACHAOS_POD_DIR"
)
