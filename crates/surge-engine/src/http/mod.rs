//! http: the client side of the wire — connections, their byte streams (TCP or TLS), and
//! the incremental HTTP/1.1 response parser with the view checks and captures read.

pub mod conn;
pub mod http1;
pub mod response;
pub mod tls;
pub mod transport;
