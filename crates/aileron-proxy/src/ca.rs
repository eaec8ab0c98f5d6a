//! The local certificate authority of TLS inspection: created on first use
//! under the data directory (the key readable by its owner only, and the
//! built-in rules keep the agent away from the data directory), and a
//! certificate minted per host, kept for the proxy's lifetime.

use crate::Error;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::sign::CertifiedKey;
use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// The CA certificate's file name under the CA directory.
pub const CA_CERT: &str = "ca.pem";
/// The CA key's file name (mode 0600).
pub const CA_KEY: &str = "ca-key.pem";

/// Leaf certificates are valid this long (clients refuse more than 398 days).
const LEAF_VALIDITY: Duration = Duration::from_secs(30 * 24 * 3600);
/// Hosts whose certificates are kept; beyond that the cache starts over.
const MAX_CACHED: usize = 4096;

/// The local CA and the certificates it minted.
pub struct Authority {
    issuer: Issuer<'static, KeyPair>,
    cert_pem: String,
    cert_path: PathBuf,
    /// One key for every leaf: minting is then one signature.
    leaf_key: Arc<dyn rustls::sign::SigningKey>,
    leaf_key_pair: KeyPair,
    minted: Mutex<HashMap<String, Arc<CertifiedKey>>>,
}

impl std::fmt::Debug for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authority")
            .field("cert_path", &self.cert_path)
            .finish_non_exhaustive()
    }
}

impl Authority {
    /// Loads the CA from `dir`, creating it (and `dir`, 0700) the first time.
    pub fn load_or_create(dir: &Path) -> Result<Authority, Error> {
        let cert_path = dir.join(CA_CERT);
        let key_path = dir.join(CA_KEY);
        let io = |what: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { what, path, source }
        };
        let (cert_pem, key) = if key_path.exists() {
            let key_pem = fs::read_to_string(&key_path).map_err(io("read", &key_path))?;
            let cert_pem = fs::read_to_string(&cert_path).map_err(io("read", &cert_path))?;
            let key = KeyPair::from_pem(&key_pem).map_err(|e| Error::Ca {
                path: key_path.clone(),
                why: e.to_string(),
            })?;
            (cert_pem, key)
        } else {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(io("create", dir))?;
            let key = KeyPair::generate().map_err(|e| Error::Ca {
                path: key_path.clone(),
                why: e.to_string(),
            })?;
            let cert = ca_params().self_signed(&key).map_err(|e| Error::Ca {
                path: cert_path.clone(),
                why: e.to_string(),
            })?;
            let cert_pem = cert.pem();
            write_new(&key_path, key.serialize_pem().as_bytes(), 0o600)
                .map_err(io("write", &key_path))?;
            write_new(&cert_path, cert_pem.as_bytes(), 0o644).map_err(io("write", &cert_path))?;
            (cert_pem, key)
        };
        let issuer = Issuer::from_ca_cert_pem(&cert_pem, key).map_err(|e| Error::Ca {
            path: cert_path.clone(),
            why: e.to_string(),
        })?;
        let leaf_key_pair = KeyPair::generate().map_err(|e| Error::Ca {
            path: key_path.clone(),
            why: e.to_string(),
        })?;
        let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key_pair.serialize_der()));
        let leaf_key =
            rustls::crypto::ring::sign::any_supported_type(&der).map_err(|e| Error::Ca {
                path: key_path.clone(),
                why: e.to_string(),
            })?;
        Ok(Authority {
            issuer,
            cert_pem,
            cert_path,
            leaf_key,
            leaf_key_pair,
            minted: Mutex::default(),
        })
    }

    /// The CA certificate (PEM), for the agent's tools to trust.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// Where the CA certificate is.
    pub fn cert_path(&self) -> &Path {
        &self.cert_path
    }

    /// The certificate for `host` (a name or an IP address), minted once.
    pub fn certificate_for(&self, host: &str) -> Result<Arc<CertifiedKey>, Error> {
        let mut minted = self.minted.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = minted.get(host) {
            return Ok(Arc::clone(c));
        }
        let mut params = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, host);
        params.distinguished_name = dn;
        params.subject_alt_names = vec![match host.parse::<std::net::IpAddr>() {
            Ok(ip) => SanType::IpAddress(ip),
            Err(_) => SanType::DnsName(host.try_into().map_err(|_| Error::Ca {
                path: self.cert_path.clone(),
                why: format!("`{host}` cannot be named in a certificate"),
            })?),
        }];
        let now = SystemTime::now();
        params.not_before = (now - Duration::from_secs(3600)).into();
        params.not_after = (now + LEAF_VALIDITY).into();
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        let cert = params
            .signed_by(&self.leaf_key_pair, &self.issuer)
            .map_err(|e| Error::Ca {
                path: self.cert_path.clone(),
                why: e.to_string(),
            })?;
        let chain = vec![CertificateDer::from(cert.der().to_vec())];
        let certified = Arc::new(CertifiedKey::new(chain, Arc::clone(&self.leaf_key)));
        if minted.len() >= MAX_CACHED {
            minted.clear();
        }
        minted.insert(host.to_owned(), Arc::clone(&certified));
        Ok(certified)
    }

    /// Writes what the agent's tools trust into `dir`: `ca-bundle.pem`
    /// (the system's roots, as `roots_pem` gives them, and this CA) and
    /// `proxy-ca.pem` (this CA alone, for `NODE_EXTRA_CA_CERTS`).
    pub fn write_trust(&self, dir: &Path, roots_pem: &str) -> Result<(), Error> {
        self.write_bundle(&dir.join("ca-bundle.pem"), roots_pem)?;
        self.write_bundle(&dir.join("proxy-ca.pem"), "")
    }

    fn write_bundle(&self, path: &Path, roots_pem: &str) -> Result<(), Error> {
        let mut text = String::with_capacity(roots_pem.len() + self.cert_pem.len() + 64);
        text.push_str(roots_pem);
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("# Aileron's local proxy CA (TLS inspection)\n");
        text.push_str(&self.cert_pem);
        let tmp = path.with_extension("tmp");
        let _ = fs::remove_file(&tmp);
        write_new(&tmp, text.as_bytes(), 0o644).map_err(|source| Error::Io {
            what: "write",
            path: tmp.clone(),
            source,
        })?;
        fs::rename(&tmp, path).map_err(|source| Error::Io {
            what: "write",
            path: path.to_path_buf(),
            source,
        })
    }
}

/// The system's trusted roots as PEM text: the first bundle file found
/// (`SSL_CERT_FILE`, then the usual places), else the roots rustls finds.
pub fn system_roots_pem() -> String {
    let mut candidates: Vec<PathBuf> = std::env::var_os("SSL_CERT_FILE")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    candidates.extend(
        [
            "/etc/ssl/certs/ca-certificates.crt",
            "/etc/pki/tls/certs/ca-bundle.crt",
            "/etc/ssl/ca-bundle.pem",
            "/etc/ssl/cert.pem",
            "/usr/local/etc/openssl/cert.pem",
        ]
        .map(PathBuf::from),
    );
    for c in candidates {
        if let Ok(text) = fs::read_to_string(&c)
            && text.contains("-----BEGIN CERTIFICATE-----")
        {
            return text;
        }
    }
    rustls_native_certs::load_native_certs()
        .certs
        .iter()
        .map(|c| pem::encode(&pem::Pem::new("CERTIFICATE", c.as_ref().to_vec())))
        .collect()
}

fn ca_params() -> CertificateParams {
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default();
    let name = if host.is_empty() {
        "Aileron local proxy CA".to_owned()
    } else {
        format!("Aileron local proxy CA ({host})")
    };
    dn.push(DnType::CommonName, name);
    dn.push(DnType::OrganizationName, "Aileron");
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let now = SystemTime::now();
    params.not_before = (now - Duration::from_secs(24 * 3600)).into();
    params.not_after = (now + Duration::from_secs(10 * 365 * 24 * 3600)).into();
    params
}

/// Creates `path` with `mode` (never widening an existing file's).
fn write_new(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}
