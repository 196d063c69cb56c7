package mail

import "crypto/x509"

// SetRootCAs lets the external tests trust smtptest's self-signed
// certificate; production always uses the system roots.
func SetRootCAs(tr Transport, pool *x509.CertPool) { tr.(*SMTP).rootCAs = pool }
