-- Names that look alike (UTS #39's confusable skeleton, see
-- protocol::text::look_alike_key): an account's name is kept with its key, so
-- that a new account or a guest is refused a name that looks like one
-- already taken. Rows made before this are given their key when the store
-- opens (the key is computed in Rust).
ALTER TABLE users ADD COLUMN look_alike_key TEXT;
CREATE INDEX users_by_look_alike_key ON users (look_alike_key);
