// Package loadagent runs the steady-state load from inside the cluster: N pods
// of the project's image, each running `kafkachaos steadystate --agent`
// under one run ID with its own range of producer IDs, as a StatefulSet.
//
// The suite deploys them (Deploy, Ready), marks the phases itself,
// stops them (Stop) and collects each agent's measurements through the API
// server (pods/portforward, Collect), so it needs no network path to the
// pods.
// steadystate.Merge then merges the measurements into one report:
// histograms merged, not averaged; records checked per producer.
//
// On the embedded local cluster the image maps to the project's binary.
package loadagent
