package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// securityFlags are the client security settings, named after Kafka's client
// properties (security.protocol, sasl.mechanism, ...). They can also come
// from a Kafka client properties file (--command-config); flags win.
type securityFlags struct {
	commandConfig    string
	protocol         string
	saslMechanism    string
	saslUsername     string
	saslPassword     string
	caLocation       string
	certLocation     string
	keyLocation      string
	endpointIdentAlg string
}

func (s *securityFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&s.commandConfig, "command-config", "", "Kafka client properties file (security.protocol, sasl.mechanism, sasl.jaas.config, ssl.truststore.location as PEM, ...)")
	fl.StringVar(&s.protocol, "security-protocol", "", "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (default PLAINTEXT)")
	fl.StringVar(&s.saslMechanism, "sasl-mechanism", "", "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fl.StringVar(&s.saslUsername, "sasl-username", "", "SASL username")
	fl.StringVar(&s.saslPassword, "sasl-password", "", "SASL password (or set KAFKACHAOS_SASL_PASSWORD)")
	fl.StringVar(&s.caLocation, "ssl-ca-location", "", "PEM file of CA certificates to trust (ssl.truststore.location with type PEM)")
	fl.StringVar(&s.certLocation, "ssl-certificate-location", "", "PEM client certificate for mutual TLS")
	fl.StringVar(&s.keyLocation, "ssl-key-location", "", "PEM client private key for mutual TLS")
	fl.StringVar(&s.endpointIdentAlg, "ssl-endpoint-identification-algorithm", "", "https (verify the broker host name, default) or none")
}

// jaasField reads username="..." and password="..." from sasl.jaas.config.
var jaasField = regexp.MustCompile(`(username|password)\s*=\s*"([^"]*)"`)

// fromProperties fills unset fields from a Kafka client properties file.
func (s *securityFlags) fromProperties(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return usageError{fmt.Errorf("command config: %w", err)}
	}
	defer f.Close()
	set := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "security.protocol":
			set(&s.protocol, v)
		case "sasl.mechanism":
			set(&s.saslMechanism, v)
		case "sasl.jaas.config":
			for _, m := range jaasField.FindAllStringSubmatch(v, -1) {
				if m[1] == "username" {
					set(&s.saslUsername, m[2])
				} else {
					set(&s.saslPassword, m[2])
				}
			}
		case "ssl.truststore.location", "ssl.ca.location":
			set(&s.caLocation, v)
		case "ssl.certificate.location", "ssl.keystore.certificate.location":
			set(&s.certLocation, v)
		case "ssl.key.location":
			set(&s.keyLocation, v)
		case "ssl.endpoint.identification.algorithm":
			if v == "" {
				v = "none" // Kafka's way to turn the host name check off
			}
			set(&s.endpointIdentAlg, v)
		case "ssl.truststore.type", "ssl.keystore.type":
			if !strings.EqualFold(v, "PEM") {
				return usageError{fmt.Errorf("command config: %s=%s is not supported: convert the store to PEM", k, v)}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return usageError{fmt.Errorf("command config: %w", err)}
	}
	return nil
}

// apply sets cfg's TLS and SASL from the flags.
func (s *securityFlags) apply(cfg *steadystate.Config) error {
	if s.commandConfig != "" {
		if err := s.fromProperties(s.commandConfig); err != nil {
			return err
		}
	}
	if s.saslPassword == "" {
		s.saslPassword = os.Getenv("KAFKACHAOS_SASL_PASSWORD")
	}
	proto := strings.ToUpper(s.protocol)
	if proto == "" {
		proto = "PLAINTEXT"
	}
	var useTLS, useSASL bool
	switch proto {
	case "PLAINTEXT":
	case "SSL":
		useTLS = true
	case "SASL_PLAINTEXT":
		useSASL = true
	case "SASL_SSL":
		useTLS, useSASL = true, true
	default:
		return usageError{fmt.Errorf("unknown security protocol %q (want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)", s.protocol)}
	}
	if useSASL {
		mech := strings.ToUpper(s.saslMechanism)
		if mech == "" {
			mech = "PLAIN" // Kafka's default sasl.mechanism
		}
		cfg.SASL = steadystate.SASL{Mechanism: mech, Username: s.saslUsername, Password: s.saslPassword}
	} else if s.saslMechanism != "" {
		return usageError{fmt.Errorf("--sasl-mechanism %s needs --security-protocol SASL_PLAINTEXT or SASL_SSL", s.saslMechanism)}
	}
	if !useTLS {
		if s.caLocation != "" || s.certLocation != "" {
			return usageError{fmt.Errorf("TLS files given but security protocol is %s: use SSL or SASL_SSL", proto)}
		}
		return nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	skipHostname := false
	switch strings.ToLower(s.endpointIdentAlg) {
	case "", "https":
	case "none":
		skipHostname = true
	default:
		return usageError{fmt.Errorf("unknown ssl endpoint identification algorithm %q (want https or none)", s.endpointIdentAlg)}
	}
	if s.caLocation != "" {
		pem, err := os.ReadFile(s.caLocation)
		if err != nil {
			return usageError{fmt.Errorf("ssl CA: %w", err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return usageError{fmt.Errorf("ssl CA %s holds no PEM certificate", s.caLocation)}
		}
		tc.RootCAs = pool
	}
	if (s.certLocation == "") != (s.keyLocation == "") {
		return usageError{fmt.Errorf("mutual TLS needs both --ssl-certificate-location and --ssl-key-location")}
	}
	if s.certLocation != "" {
		cert, err := tls.LoadX509KeyPair(s.certLocation, s.keyLocation)
		if err != nil {
			return usageError{fmt.Errorf("ssl client certificate: %w", err)}
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	if skipHostname {
		// As Kafka's ssl.endpoint.identification.algorithm= : the chain is
		// still verified against the trusted CAs, only the host name is not.
		tc.InsecureSkipVerify = true //nolint:gosec // verified below
		roots := tc.RootCAs
		tc.VerifyConnection = func(st tls.ConnectionState) error {
			if len(st.PeerCertificates) == 0 {
				return fmt.Errorf("tls: the broker sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range st.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := st.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	cfg.TLS = tc
	return nil
}
