package localcluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity is how long the cluster's certificates last.
const certValidity = 10 * 365 * 24 * time.Hour

// pki is the cluster's certificate authority and the files it issued, all
// under one directory.
type pki struct{ dir string }

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

// Files of the PKI.
const (
	caCert        = "ca.crt"
	caKey         = "ca.key"
	apiserverCert = "apiserver.crt"
	apiserverKey  = "apiserver.key"
	adminCert     = "admin.crt"
	adminKey      = "admin.key"
	saKey         = "sa.key"
	saPub         = "sa.pub"
)

// ensure creates whatever is missing: the CA, the API server's serving
// certificate, the admin client certificate (system:masters) and the
// service-account signing key. Existing files are kept, so a restarted
// cluster keeps its identity.
func (p pki) ensure(serviceIP net.IP) error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return fmt.Errorf("localcluster: pki: %w", err)
	}
	if !exists(p.path(caCert)) {
		key, err := newKey()
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			Subject:               pkix.Name{CommonName: "kafkachaos-local-ca"},
			IsCA:                  true,
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
			BasicConstraintsValid: true,
		}
		if err := p.issue(caCert, caKey, tmpl, key, nil, nil); err != nil {
			return err
		}
	}
	ca, caPriv, err := p.loadCA()
	if err != nil {
		return err
	}
	if !exists(p.path(apiserverCert)) {
		key, err := newKey()
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: "kube-apiserver"},
			KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			IPAddresses: []net.IP{net.ParseIP(host), serviceIP},
			DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
				"kubernetes.default.svc." + clusterDomain},
		}
		if err := p.issue(apiserverCert, apiserverKey, tmpl, key, ca, caPriv); err != nil {
			return err
		}
	}
	if !exists(p.path(adminCert)) {
		key, err := newKey()
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: "kafkachaos-admin", Organization: []string{"system:masters"}},
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		if err := p.issue(adminCert, adminKey, tmpl, key, ca, caPriv); err != nil {
			return err
		}
	}
	if !exists(p.path(saKey)) {
		key, err := newKey()
		if err != nil {
			return err
		}
		if err := writeKey(p.path(saKey), key); err != nil {
			return err
		}
		der, err := x509.MarshalPKIXPublicKey(key.Public())
		if err != nil {
			return fmt.Errorf("localcluster: pki: %w", err)
		}
		if err := writePEM(p.path(saPub), "PUBLIC KEY", der, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// issue signs tmpl with parent (self-signed when parent is nil) and writes
// the certificate and key.
func (p pki) issue(certName, keyName string, tmpl *x509.Certificate, key *ecdsa.PrivateKey, parent *x509.Certificate, parentKey crypto.Signer) error {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return fmt.Errorf("localcluster: pki: %w", err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(certValidity)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return fmt.Errorf("localcluster: pki: sign %s: %w", certName, err)
	}
	if err := writeKey(p.path(keyName), key); err != nil {
		return err
	}
	return writePEM(p.path(certName), "CERTIFICATE", der, 0o644)
}

func (p pki) loadCA() (*x509.Certificate, crypto.Signer, error) {
	certPEM, err := os.ReadFile(p.path(caCert))
	if err != nil {
		return nil, nil, fmt.Errorf("localcluster: pki: %w", err)
	}
	keyPEM, err := os.ReadFile(p.path(caKey))
	if err != nil {
		return nil, nil, fmt.Errorf("localcluster: pki: %w", err)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, errors.New("localcluster: pki: the CA files are not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("localcluster: pki: %w", err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("localcluster: pki: %w", err)
	}
	return cert, key, nil
}

func newKey() (*ecdsa.PrivateKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("localcluster: pki: %w", err)
	}
	return k, nil
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("localcluster: pki: %w", err)
	}
	return writePEM(path, "EC PRIVATE KEY", der, 0o600)
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
		return fmt.Errorf("localcluster: pki: %w", err)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
