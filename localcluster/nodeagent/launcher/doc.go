// Package launcher runs the images' programs inside a pod as the images do: apache/kafka's launcher and scripts (the KAFKA_* env contract) and zookeeper's (ZOO_*), from the fetched jars.
package launcher
