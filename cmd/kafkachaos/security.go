package main

import (
	"github.com/spf13/pflag"

	"github.com/kafkachaos/kafkachaos/kafkasec"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// securityFlags are the client security settings as flags, named after
// Kafka's client properties (security.protocol, sasl.mechanism, ...). They
// can also come from a Kafka client properties file (--command-config);
// flags win.
type securityFlags struct{ s kafkasec.Settings }

func (f *securityFlags) register(fl *pflag.FlagSet) {
	s := &f.s
	fl.StringVar(&s.CommandConfig, "command-config", "", "Kafka client properties file (security.protocol, sasl.mechanism, sasl.jaas.config, ssl.truststore.location as PEM, ...)")
	fl.StringVar(&s.Protocol, "security-protocol", "", "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (default PLAINTEXT)")
	fl.StringVar(&s.SASLMechanism, "sasl-mechanism", "", "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fl.StringVar(&s.SASLUsername, "sasl-username", "", "SASL username")
	fl.StringVar(&s.SASLPassword, "sasl-password", "", "SASL password (or set "+kafkasec.PasswordEnv+")")
	fl.StringVar(&s.CALocation, "ssl-ca-location", "", "PEM file of CA certificates to trust (ssl.truststore.location with type PEM)")
	fl.StringVar(&s.CertLocation, "ssl-certificate-location", "", "PEM client certificate for mutual TLS")
	fl.StringVar(&s.KeyLocation, "ssl-key-location", "", "PEM client private key for mutual TLS")
	fl.StringVar(&s.EndpointIdentificationAlgorithm, "ssl-endpoint-identification-algorithm", "", "https (verify the broker host name, default) or none")
}

// apply sets cfg's TLS and SASL from the flags; bad settings are a usage
// error.
func (f *securityFlags) apply(cfg *steadystate.Config) error {
	r, err := f.s.Resolve()
	if err != nil {
		return usageError{err}
	}
	cfg.TLS = r.TLS
	cfg.SASL = r.SASL
	return nil
}
