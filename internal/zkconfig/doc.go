// Package zkconfig renders a ZooKeeper server's zoo.cfg, myid and JVM options from the environment, following the official zookeeper image's env-var contract (docker-entrypoint.sh and the Dockerfile's ENV defaults).
package zkconfig
