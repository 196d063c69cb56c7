// Package sshtest has what the tests of the SSH-based switch drivers share: host keys and an
// SSH server's listener on loopback.
package sshtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"net"
	"testing"

	"golang.org/x/crypto/ssh"
)

// Signer returns a fresh ed25519 key.
func Signer(t testing.TB) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return signer
}

// Listen accepts connections on a loopback port until t ends and hands each to serve on a
// goroutine of its own; a nil serve holds each connection open without a word, as a switch
// that accepts and then says nothing. It returns the address.
func Listen(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
			t.Cleanup(func() { c.Close() })
			if serve != nil {
				go serve(c)
			}
		}
	}()
	return ln.Addr().String()
}
