//! http: the client side of the wire — connections, their byte streams (TCP or TLS), and
//! the incremental HTTP/1.1 response parser with the view checks and captures read, and HTTP/2
//! connections whose streams are read through that same parser.

pub(crate) mod conn;
pub(crate) mod events;
pub(crate) mod h2;
pub(crate) mod http1;
pub(crate) mod response;
pub(crate) mod tls;
pub(crate) mod transport;
