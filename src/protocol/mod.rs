//! Wire formats: the classic text lines of mj-server's protocol.
