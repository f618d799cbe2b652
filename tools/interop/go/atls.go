// aTLS as the reference implements it (docs/protocol/atls.md, docs/protocol/attestation-variants.md), written from the spec for
// interop tests only: dummy variant, per-handshake TLS configs, SNI and CA-list nonces.
package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/credentials"
)

var dummyOID = asn1.ObjectIdentifier{1, 3, 9900, 1, 1}
var oidCommonName = asn1.ObjectIdentifier{2, 5, 4, 3}

// dummyDocument is the `dummy` variant's document: Go JSON with base64 byte slices.
type dummyDocument struct {
	UserData []byte
	Nonce    []byte
}

func issueDummy(userData, nonce []byte) ([]byte, error) {
	return json.Marshal(dummyDocument{UserData: userData, Nonce: nonce})
}

func validateDummy(doc, nonce []byte) ([]byte, error) {
	var d dummyDocument
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	if !bytes.Equal(d.Nonce, nonce) {
		return nil, fmt.Errorf("invalid nonce: expected %x, got %x", d.Nonce, nonce)
	}
	return d.UserData, nil
}

func newNonce() []byte {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
}

// atlsCertificate: fresh P-256 key, self-signed, CN=Constellation, now ± 2 h, and with attest the
// dummy document over (nonce, sha256(SPKI)) as a non-critical extension.
func atlsCertificate(attest bool, nonce []byte) (*tls.Certificate, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	spki, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "Constellation"},
		NotBefore:    now.Add(-2 * time.Hour),
		NotAfter:     now.Add(2 * time.Hour),
	}
	if attest {
		hash := sha256.Sum256(spki)
		doc, err := issueDummy(hash[:], nonce)
		if err != nil {
			return nil, err
		}
		tmpl.ExtraExtensions = []pkix.Extension{{Id: dummyOID, Value: doc}}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}, nil
}

// verifyPeer: parse, Verify against itself as the only root, then (if validate) the first
// extension under a validator's OID must validate over nonce and bind sha256(SPKI).
func verifyPeer(rawCerts [][]byte, nonce []byte, validate bool) error {
	if len(rawCerts) == 0 {
		return errors.New("rawCerts is empty")
	}
	cert, err := x509.ParseCertificate(rawCerts[0])
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots}); err != nil {
		return err
	}
	// Stricter than the reference: the self-signature must hold.
	if err := cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
		return fmt.Errorf("self-signature: %w", err)
	}
	spki, err := x509.MarshalPKIXPublicKey(cert.PublicKey)
	if err != nil {
		return err
	}
	hash := sha256.Sum256(spki)
	if !validate {
		return nil
	}
	var oids []string
	for _, ext := range cert.Extensions {
		oids = append(oids, ext.Id.String())
		if !ext.Id.Equal(dummyOID) {
			continue
		}
		userData, err := validateDummy(ext.Value, nonce)
		if err != nil {
			return err
		}
		if !bytes.Equal(userData, hash[:]) {
			return errors.New("certificate hash does not match user data")
		}
		return nil
	}
	return fmt.Errorf("certificate does not contain compatible attestation documents: got extension OIDs %#v", oids)
}

// nonceFromAcceptableCAs reads the server nonce from the CertificateRequest's CA list.
func nonceFromAcceptableCAs(cas [][]byte) ([]byte, error) {
	if len(cas) != 1 {
		return nil, fmt.Errorf("unexpected acceptableCAs length: %d", len(cas))
	}
	var rdns pkix.RDNSequence
	if _, err := asn1.Unmarshal(cas[0], &rdns); err != nil {
		return nil, err
	}
	for _, rdn := range rdns {
		for _, atv := range rdn {
			if atv.Type.Equal(oidCommonName) {
				s, ok := atv.Value.(string)
				if !ok {
					return nil, errors.New("unexpected RDN type")
				}
				return base64.StdEncoding.DecodeString(s)
			}
		}
	}
	return nil, errors.New("CN not found")
}

// clientStats records what the last handshake saw (for the test's assertions).
type clientStats struct {
	acceptableCAs atomic.Int32
	certRequested atomic.Bool
}

func clientTLSConfig(attest, validate bool, maxVersion uint16, stats *clientStats) *tls.Config {
	nonce := newNonce()
	return &tls.Config{
		ServerName:         base64.StdEncoding.EncodeToString(nonce),
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(rawCerts [][]byte, _ [][]*x509.Certificate) error {
			return verifyPeer(rawCerts, nonce, validate)
		},
		GetClientCertificate: func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
			stats.certRequested.Store(true)
			stats.acceptableCAs.Store(int32(len(cri.AcceptableCAs)))
			serverNonce, err := nonceFromAcceptableCAs(cri.AcceptableCAs)
			if err != nil {
				return nil, err
			}
			return atlsCertificate(attest, serverNonce)
		},
		MinVersion: tls.VersionTLS12,
		MaxVersion: maxVersion,
		NextProtos: []string{"http/1.1", "h2"},
	}
}

func serverTLSConfig(attest, verifyClients bool) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(chi *tls.ClientHelloInfo) (*tls.Config, error) {
			clientNonce, err := base64.StdEncoding.DecodeString(chi.ServerName)
			if err != nil {
				return nil, fmt.Errorf("decoding SNI nonce: %w", err)
			}
			cert, err := atlsCertificate(attest, clientNonce)
			if err != nil {
				return nil, err
			}
			cfg := &tls.Config{
				Certificates: []tls.Certificate{*cert},
				MinVersion:   tls.VersionTLS12,
				NextProtos:   []string{"http/1.1", "h2"},
			}
			if verifyClients {
				serverNonce := newNonce()
				caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
				if err != nil {
					return nil, err
				}
				tmpl := &x509.Certificate{SerialNumber: big.NewInt(0), Subject: pkix.Name{CommonName: base64.StdEncoding.EncodeToString(serverNonce)}}
				der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &caKey.PublicKey, caKey)
				if err != nil {
					return nil, err
				}
				ca, err := x509.ParseCertificate(der)
				if err != nil {
					return nil, err
				}
				pool := x509.NewCertPool()
				pool.AddCert(ca)
				cfg.ClientCAs = pool
				cfg.ClientAuth = tls.RequireAnyClientCert
				cfg.VerifyPeerCertificate = func(rawCerts [][]byte, _ [][]*x509.Certificate) error {
					return verifyPeer(rawCerts, serverNonce, true)
				}
			}
			return cfg, nil
		},
	}
}

// transportCredentials builds a fresh TLS config per handshake, like the reference's atlscredentials.
type transportCredentials struct {
	attest, validate bool
	maxVersion       uint16
	stats            *clientStats
}

func (c *transportCredentials) ClientHandshake(ctx context.Context, authority string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return credentials.NewTLS(clientTLSConfig(c.attest, c.validate, c.maxVersion, c.stats)).ClientHandshake(ctx, authority, conn)
}

func (c *transportCredentials) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return credentials.NewTLS(serverTLSConfig(c.attest, c.validate)).ServerHandshake(conn)
}

func (c *transportCredentials) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "tls", SecurityVersion: "1.2"}
}

func (c *transportCredentials) Clone() credentials.TransportCredentials {
	cp := *c
	return &cp
}

func (c *transportCredentials) OverrideServerName(string) error {
	return errors.New("cannot override server name")
}
