/**
 * LOOPBACK-ONLY TEST CERTIFICATE. Self-signed, its private key is public in this repository: it protects nothing.
 * Used only when `openssl` is missing, so the cTrader simulator can still serve TLS on 127.0.0.1. Never use it for
 * anything reachable from another machine.
 */
export const LOOPBACK_CERT_PEM = `-----BEGIN CERTIFICATE-----
MIIB3jCCAYOgAwIBAgIURC/Lx3THNZnRFxhMLfADqwSJ5lwwCgYIKoZIzj0EAwIw
NjE0MDIGA1UEAwwrY29weXRyYWRlIGNUcmFkZXIgc2ltdWxhdG9yIChsb29wYmFj
ayBvbmx5KTAeFw0yNjExMjIwNDI0MjlaFw0zNjExMTkwNDI0MjlaMDYxNDAyBgNV
BAMMK2NvcHl0cmFkZSBjVHJhZGVyIHNpbXVsYXRvciAobG9vcGJhY2sgb25seSkw
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASxrOkzJwT91hXA6cWkx8t1xbPHsNUk
Rn4c1PmAPodDRhIbzoVmnmpp3QD8CD0eqKpnaO/IWhwi28E8hpMefeE/o28wbTAd
BgNVHQ4EFgQUeTvif//UJbCjHcE8psqiiyeK4E0wHwYDVR0jBBgwFoAUeTvif//U
JbCjHcE8psqiiyeK4E0wGgYDVR0RBBMwEYcEfwAAAYIJbG9jYWxob3N0MA8GA1Ud
EwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhALEjNhD9a6RIQu6DUTo5Rg3z
WRVRG63SCeG8Ij9JtuSdAiEA252k5LXdjWJIh48A7QIt14WFF8gW4F1FtCZwgTYZ
6JM=
-----END CERTIFICATE-----
`;

export const LOOPBACK_KEY_PEM = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg6DH0u1PH4XpN20fC
8G6nftTLkABHDD1KBzk0V1jy9R+hRANCAASxrOkzJwT91hXA6cWkx8t1xbPHsNUk
Rn4c1PmAPodDRhIbzoVmnmpp3QD8CD0eqKpnaO/IWhwi28E8hpMefeE/
-----END PRIVATE KEY-----
`;
