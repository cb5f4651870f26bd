//! tls: the rustls client configuration shared by every connection of a run.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// TlsSetup is what a connection needs to start a TLS session: the shared config and the
/// name the server's certificate must match.
#[derive(Clone, Debug)]
pub(crate) struct TlsSetup {
    /// config is the client configuration (roots, ALPN, verification policy).
    pub config: Arc<ClientConfig>,
    /// server_name is the SNI and verification name.
    pub server_name: ServerName<'static>,
}

impl TlsSetup {
    /// new builds the TLS setup for `host`; `insecure` disables certificate verification;
    /// `http2` offers only h2 by ALPN (else only http/1.1).
    pub(crate) fn new(host: &str, insecure: bool, http2: bool) -> Result<TlsSetup, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS setup failed: {e}"))?;
        let mut config = if insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
                .with_no_client_auth()
        } else {
            let roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
            builder.with_root_certificates(roots).with_no_client_auth()
        };
        config.alpn_protocols = vec![if http2 { b"h2".to_vec() } else { b"http/1.1".to_vec() }];
        let server_name =
            ServerName::try_from(host.to_string()).map_err(|_| format!("'{host}' is not a valid TLS server name"))?;
        Ok(TlsSetup { config: Arc::new(config), server_name })
    }

    /// connection starts a client session for one connection.
    pub(crate) fn connection(&self) -> Result<rustls::ClientConnection, rustls::Error> {
        rustls::ClientConnection::new(self.config.clone(), self.server_name.clone())
    }
}

/// AcceptAnyCertificate is the `--insecure` verifier: it checks signatures (so the
/// handshake is still well-formed) but trusts any certificate chain and name.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
