// Command kafkachaos-node is the local cluster's node agent and the programs it runs in pods; kafkachaos cluster up starts it.
//
// Its subcommands are agent (the virtual-kubelet nodes), pod-exec (a
// container's namespaces and filesystem, then its program), kafka-run and
// zookeeper-run (the apache/kafka and zookeeper images' launchers), and
// purge (what an agent that crashed left behind). They are apart from the
// kafkachaos CLI so that it carries neither virtual-kubelet nor nftables.
package main
