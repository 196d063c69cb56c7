package identity

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Sealer encrypts the small secrets the service must read back (an operator's second-factor
// key, a switch's credentials) with AES-256-GCM, under a key derived from the service secret
// with HKDF-SHA256, so that a copy of the database alone reveals none of them.
//
// A sealed value is "v1.<key id>.<base64url(nonce | ciphertext)>": the format's version, then
// which key sealed it (a fingerprint of the key, never the key), so that the service secret
// can change: a Sealer made with the new secret first and the old ones after opens what any of
// them sealed, and seals with the first only. The purpose a value is sealed for (a kind of
// secret and the object it belongs to, "operator totp:ID") is authenticated with it: a value
// copied to another row or another use does not open.
type Sealer struct {
	current sealKey
	keys    map[string]cipher.AEAD // by key id
}

type sealKey struct {
	id   string
	aead cipher.AEAD
}

const (
	sealFormat = "v1"
	sealInfo   = "subprov seal v1"
)

// ErrUnsealable is the failure to open a sealed value: not one this service sealed, sealed by
// a key it no longer has, tampered with, or sealed for another purpose.
var ErrUnsealable = errors.New("sealed value cannot be opened")

// NewSealer builds a Sealer that seals under secret and opens what secret or any of previous
// sealed.
func NewSealer(secret string, previous ...string) (*Sealer, error) {
	s := &Sealer{keys: map[string]cipher.AEAD{}}
	for i, sec := range append([]string{secret}, previous...) {
		if sec == "" {
			return nil, errors.New("seal: empty secret")
		}
		k, err := deriveSealKey(sec)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			s.current = k
		}
		s.keys[k.id] = k.aead
	}
	return s, nil
}

func deriveSealKey(secret string) (sealKey, error) {
	key, err := hkdf.Key(sha256.New, []byte(secret), nil, sealInfo, 32)
	if err != nil {
		return sealKey{}, fmt.Errorf("seal key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return sealKey{}, fmt.Errorf("seal key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return sealKey{}, fmt.Errorf("seal key: %w", err)
	}
	sum := sha256.Sum256(append([]byte("subprov seal key id\x00"), key...))
	return sealKey{id: hex.EncodeToString(sum[:4]), aead: aead}, nil
}

// Seal encrypts plaintext for purpose under the current key.
func (s *Sealer) Seal(purpose string, plaintext []byte) (string, error) {
	nonce := make([]byte, s.current.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal nonce: %w", err)
	}
	out := s.current.aead.Seal(nonce, nonce, plaintext, []byte(purpose))
	return sealFormat + "." + s.current.id + "." + base64.RawURLEncoding.EncodeToString(out), nil
}

// Open decrypts a value Seal made for the same purpose, under any of the Sealer's keys; any
// other value is ErrUnsealable.
func (s *Sealer) Open(purpose, sealed string) ([]byte, error) {
	parts := strings.Split(sealed, ".")
	if len(parts) != 3 || parts[0] != sealFormat {
		return nil, ErrUnsealable
	}
	aead, ok := s.keys[parts[1]]
	if !ok {
		return nil, ErrUnsealable
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, ErrUnsealable
	}
	out, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(purpose))
	if err != nil {
		return nil, ErrUnsealable
	}
	return out, nil
}
