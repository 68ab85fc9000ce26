package localcluster

// WithKafkaLibs pins the Kafka jars that every apache/kafka pod runs,
// whatever its image tag. Without it a pod runs the fetched jars of the
// version its tag names, from the Kafka cache (WithKafkaCache).
func WithKafkaLibs(dir string) Option {
	return func(c *Cluster) {
		if dir != "" {
			c.kafkaLibs = dir
		}
	}
}

// WithKafkaCache sets the directory of fetched Kafka versions
// (<dir>/<version>/libs) that apache/kafka pods run by their image tag,
// overriding the default: the repository's .cache/kafka, if found.
func WithKafkaCache(dir string) Option {
	return func(c *Cluster) {
		if dir != "" {
			c.kafkaCache = dir
		}
	}
}

// KafkaCache returns the directory of fetched Kafka versions that
// apache/kafka pods run by tag ("" if none was found).
func (c *Cluster) KafkaCache() string { return c.kafkaCache }
