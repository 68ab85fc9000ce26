package kafkasec

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kafkachaos/kafkachaos/internal/properties"
)

// ErrBadSettings wraps every error of settings that cannot work.
var ErrBadSettings = errors.New("kafka client security")

// PasswordEnv is read for the SASL password when none is set.
const PasswordEnv = "KAFKACHAOS_SASL_PASSWORD"

// Settings are a client's security settings. The zero value is PLAINTEXT.
type Settings struct {
	// CommandConfig is a Kafka client properties file; its values fill the
	// fields that are empty.
	CommandConfig string `json:"commandConfig,omitempty"`
	// Protocol is PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.
	Protocol string `json:"securityProtocol,omitempty"`
	// SASLMechanism is PLAIN (the default), SCRAM-SHA-256 or SCRAM-SHA-512.
	SASLMechanism string `json:"saslMechanism,omitempty"`
	SASLUsername  string `json:"saslUsername,omitempty"`
	// SASLPassword; empty reads $KAFKACHAOS_SASL_PASSWORD.
	SASLPassword string `json:"saslPassword,omitempty"`
	// CALocation is a PEM file of CA certificates to trust; empty trusts
	// the system's.
	CALocation string `json:"sslCaLocation,omitempty"`
	// CertLocation and KeyLocation are a PEM client certificate and key
	// for mutual TLS.
	CertLocation string `json:"sslCertificateLocation,omitempty"`
	KeyLocation  string `json:"sslKeyLocation,omitempty"`
	// EndpointIdentificationAlgorithm is https (verify the broker's host
	// name, the default) or none (verify the chain only).
	EndpointIdentificationAlgorithm string `json:"sslEndpointIdentificationAlgorithm,omitempty"`
}

// SASL is a mechanism (Kafka's names) and its credentials.
type SASL struct {
	Mechanism string // PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; "" = none
	Username  string
	Password  string
}

// Resolved are checked settings, ready for a client.
type Resolved struct {
	TLS  *tls.Config // nil: no TLS
	SASL SASL
}

// jaasField reads username="..." and password="..." from sasl.jaas.config.
var jaasField = regexp.MustCompile(`(username|password)\s*=\s*"([^"]*)"`)

func bad(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadSettings}, a...)...)
}

// FromProperties fills s's empty fields from a Kafka client properties file.
func (s *Settings) FromProperties(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return bad("command config: %w", err)
	}
	defer f.Close()
	set := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	props, err := properties.Read(f)
	if err != nil {
		return bad("command config %s: %w", path, err)
	}
	for _, p := range props.List() {
		k, v := p.Key, strings.TrimSpace(p.Value)
		switch k {
		case "security.protocol":
			set(&s.Protocol, v)
		case "sasl.mechanism":
			set(&s.SASLMechanism, v)
		case "sasl.jaas.config":
			for _, m := range jaasField.FindAllStringSubmatch(v, -1) {
				if m[1] == "username" {
					set(&s.SASLUsername, m[2])
				} else {
					set(&s.SASLPassword, m[2])
				}
			}
		case "ssl.truststore.location", "ssl.ca.location":
			set(&s.CALocation, v)
		case "ssl.certificate.location": // librdkafka's name
			set(&s.CertLocation, v)
		case "ssl.keystore.location": // a PEM keystore: key and certificate chain in one file
			set(&s.CertLocation, v)
			set(&s.KeyLocation, v)
		case "ssl.key.location":
			set(&s.KeyLocation, v)
		case "ssl.endpoint.identification.algorithm":
			if v == "" {
				v = "none" // Kafka's way to turn the host name check off
			}
			set(&s.EndpointIdentificationAlgorithm, v)
		case "ssl.truststore.type", "ssl.keystore.type":
			if !strings.EqualFold(v, "PEM") {
				return bad("command config: %s=%s is not supported: convert the store to PEM", k, v)
			}
		}
	}
	return nil
}

// Resolve reads CommandConfig and the PEM files, checks that the settings
// fit together, and returns them ready for a client.
func (s Settings) Resolve() (Resolved, error) {
	if s.CommandConfig != "" {
		if err := s.FromProperties(s.CommandConfig); err != nil {
			return Resolved{}, err
		}
	}
	if s.SASLPassword == "" {
		s.SASLPassword = os.Getenv(PasswordEnv)
	}
	proto := strings.ToUpper(s.Protocol)
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
		return Resolved{}, bad("unknown security protocol %q (want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)", s.Protocol)
	}
	var r Resolved
	if useSASL {
		mech := strings.ToUpper(s.SASLMechanism)
		if mech == "" {
			mech = "PLAIN" // Kafka's default sasl.mechanism
		}
		switch mech {
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		default:
			return Resolved{}, bad("unknown SASL mechanism %q (want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)", s.SASLMechanism)
		}
		if s.SASLUsername == "" {
			return Resolved{}, bad("SASL %s needs a username", mech)
		}
		r.SASL = SASL{Mechanism: mech, Username: s.SASLUsername, Password: s.SASLPassword}
	} else if s.SASLMechanism != "" {
		return Resolved{}, bad("SASL mechanism %s needs security protocol SASL_PLAINTEXT or SASL_SSL", s.SASLMechanism)
	}
	if !useTLS {
		if s.CALocation != "" || s.CertLocation != "" {
			return Resolved{}, bad("TLS files given but security protocol is %s: use SSL or SASL_SSL", proto)
		}
		return r, nil
	}
	tc, err := s.tlsConfig()
	if err != nil {
		return Resolved{}, err
	}
	r.TLS = tc
	return r, nil
}

func (s Settings) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	skipHostname := false
	switch strings.ToLower(s.EndpointIdentificationAlgorithm) {
	case "", "https":
	case "none":
		skipHostname = true
	default:
		return nil, bad("unknown ssl endpoint identification algorithm %q (want https or none)", s.EndpointIdentificationAlgorithm)
	}
	if s.CALocation != "" {
		pem, err := os.ReadFile(s.CALocation)
		if err != nil {
			return nil, bad("ssl CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, bad("ssl CA %s holds no PEM certificate", s.CALocation)
		}
		tc.RootCAs = pool
	}
	if (s.CertLocation == "") != (s.KeyLocation == "") {
		return nil, bad("mutual TLS needs both the certificate and the key location")
	}
	if s.CertLocation != "" {
		cert, err := tls.LoadX509KeyPair(s.CertLocation, s.KeyLocation)
		if err != nil {
			return nil, bad("ssl client certificate: %w", err)
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
				return errors.New("tls: the broker sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range st.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := st.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	return tc, nil
}

// Opts returns the franz-go client options of r.
func (r Resolved) Opts() []kgo.Opt {
	var opts []kgo.Opt
	if r.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(r.TLS.Clone()))
	}
	switch r.SASL.Mechanism {
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: r.SASL.Username, Pass: r.SASL.Password}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: r.SASL.Username, Pass: r.SASL.Password}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: r.SASL.Username, Pass: r.SASL.Password}.AsSha512Mechanism()))
	}
	return opts
}
