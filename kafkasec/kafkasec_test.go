package kafkasec

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t, "test CA")
	caPEM := write(t, dir, "ca.pem", ca.certPEM)
	notPEM := write(t, dir, "not.pem", []byte("hello"))
	keystore := write(t, dir, "keystore.pem", ca.keystorePEM(t))
	n := 0
	props := func(body string) string {
		n++
		return write(t, dir, fmt.Sprintf("client-%d.properties", n), []byte(body))
	}

	tests := []struct {
		name     string
		s        Settings
		wantErr  string
		wantTLS  bool
		wantSASL SASL
		// wantClientCert: the TLS config presents a client certificate.
		wantClientCert bool
	}{
		{name: "zero is plaintext"},
		{name: "ssl with a CA", s: Settings{Protocol: "ssl", CALocation: caPEM}, wantTLS: true},
		{name: "sasl_ssl scram", s: Settings{Protocol: "SASL_SSL", SASLMechanism: "scram-sha-512", SASLUsername: "u", SASLPassword: "p"},
			wantTLS: true, wantSASL: SASL{"SCRAM-SHA-512", "u", "p"}},
		{name: "sasl defaults to PLAIN", s: Settings{Protocol: "SASL_PLAINTEXT", SASLUsername: "u"}, wantSASL: SASL{Mechanism: "PLAIN", Username: "u"}},
		{name: "unknown protocol", s: Settings{Protocol: "TLS"}, wantErr: "unknown security protocol"},
		{name: "unknown mechanism", s: Settings{Protocol: "SASL_SSL", SASLMechanism: "GSSAPI", SASLUsername: "u"}, wantErr: "unknown SASL mechanism"},
		{name: "sasl without user", s: Settings{Protocol: "SASL_SSL", SASLMechanism: "SCRAM-SHA-256"}, wantErr: "needs a username"},
		{name: "mechanism without sasl", s: Settings{SASLMechanism: "PLAIN"}, wantErr: "needs security protocol SASL"},
		{name: "TLS files on plaintext", s: Settings{CALocation: caPEM}, wantErr: "TLS files given"},
		{name: "CA that is no PEM", s: Settings{Protocol: "SSL", CALocation: notPEM}, wantErr: "holds no PEM"},
		{name: "missing CA", s: Settings{Protocol: "SSL", CALocation: filepath.Join(dir, "nope")}, wantErr: "ssl CA"},
		{name: "cert without key", s: Settings{Protocol: "SSL", CertLocation: caPEM}, wantErr: "both the certificate and the key"},
		{name: "bad identification", s: Settings{Protocol: "SSL", EndpointIdentificationAlgorithm: "dns"}, wantErr: "endpoint identification"},
		{name: "properties file", s: Settings{CommandConfig: props(`# client.properties
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-256
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cret";
ssl.truststore.type=PEM
ssl.truststore.location=` + caPEM + `
ssl.endpoint.identification.algorithm=
`)}, wantTLS: true, wantSASL: SASL{"SCRAM-SHA-256", "alice", "s3cret"}},
		{name: "a continued jaas line", s: Settings{CommandConfig: props("security.protocol=SASL_PLAINTEXT\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n    username=\"alice\" \\\n    password=\"s3cret\";\n")},
			wantSASL: SASL{Mechanism: "PLAIN", Username: "alice", Password: "s3cret"}},
		{name: "PEM keystore for mutual TLS", s: Settings{CommandConfig: props("security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.location=" + keystore + "\n")}, wantTLS: true, wantClientCert: true},
		{name: "fields win over the file", s: Settings{SASLUsername: "bob", CommandConfig: props("security.protocol=SASL_PLAINTEXT\nsasl.jaas.config=x required username=\"alice\";\n")},
			wantSASL: SASL{Mechanism: "PLAIN", Username: "bob"}},
		{name: "JKS store", s: Settings{CommandConfig: props("security.protocol=SSL\nssl.truststore.type=JKS\n")}, wantErr: "convert the store to PEM"},
		{name: "missing file", s: Settings{CommandConfig: filepath.Join(dir, "nope.properties")}, wantErr: "command config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(PasswordEnv, "")
			r, err := tt.s.Resolve()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrBadSettings) {
					t.Fatalf("err %v, want ErrBadSettings with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantClientCert && (r.TLS == nil || len(r.TLS.Certificates) != 1) {
				t.Errorf("no client certificate in %+v", r.TLS)
			}
			if (r.TLS != nil) != tt.wantTLS || r.SASL != tt.wantSASL {
				t.Errorf("TLS %t SASL %+v; want TLS %t SASL %+v", r.TLS != nil, r.SASL, tt.wantTLS, tt.wantSASL)
			}
			if want := btoi(tt.wantTLS) + btoi(tt.wantSASL.Mechanism != ""); len(r.Opts()) != want {
				t.Errorf("%d client options, want %d", len(r.Opts()), want)
			}
		})
	}
}

func TestPasswordFromEnv(t *testing.T) {
	t.Setenv(PasswordEnv, "from-env")
	r, err := Settings{Protocol: "SASL_PLAINTEXT", SASLUsername: "u"}.Resolve()
	if err != nil || r.SASL.Password != "from-env" {
		t.Fatalf("password %q, %v; want from-env", r.SASL.Password, err)
	}
}

// TestEndpointIdentification handshakes with a broker-like TLS server whose
// certificate names another host: https refuses the name, none accepts it
// but still refuses a chain from an untrusted CA.
func TestEndpointIdentification(t *testing.T) {
	dir := t.TempDir()
	trusted, untrusted := newCA(t, "trusted CA"), newCA(t, "untrusted CA")
	caPEM := write(t, dir, "ca.pem", trusted.certPEM)
	tests := []struct {
		name   string
		alg    string
		signer *testCA
		wantOK bool
	}{
		{"https refuses another host's name", "https", trusted, false},
		{"none accepts another host's name", "none", trusted, true},
		{"none still verifies the chain", "none", untrusted, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := serveTLS(t, tt.signer.leaf(t, "broker.elsewhere.example"))
			r, err := Settings{Protocol: "SSL", CALocation: caPEM, EndpointIdentificationAlgorithm: tt.alg}.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			cfg := r.TLS.Clone()
			cfg.ServerName = "127.0.0.1"
			conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
			if err == nil {
				conn.Close()
			}
			if (err == nil) != tt.wantOK {
				t.Errorf("handshake err %v, want ok=%t", err, tt.wantOK)
			}
		})
	}
}

type testCA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// keystorePEM returns the CA's key and certificate in one PEM file, as a
// Kafka PEM keystore holds them.
func (ca *testCA) keystorePEM(t *testing.T) []byte {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return append(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), ca.certPEM...)
}

// leaf issues a server certificate for host.
func (ca *testCA) leaf(t *testing.T, host string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// serveTLS accepts TLS connections on loopback until the test ends and
// returns the address.
func serveTLS(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	return ln.Addr().String()
}

func write(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
