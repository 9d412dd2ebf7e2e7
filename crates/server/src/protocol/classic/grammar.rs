//! The grammar of the message lines: one macro declares a message enum
//! together with its parser, its printer and its names, from one table of
//! variants and typed fields ([`super::controller`], [`super::player`]).
//! The expansion names what it uses by its full path, so that a table
//! imports only its fields' types and codecs.

/// The name a message has on the wire: its variant name unless overridden.
macro_rules! wire_name {
    ($variant:ident) => {
        stringify!($variant)
    };
    ($variant:ident $wire:literal) => {
        $wire
    };
}

/// Declares a message enum together with its parser, printer and names, from
/// one table of variants and typed fields (`field: RustType = Codec`).
macro_rules! messages {
    (
        $(#[$enum_meta:meta])*
        pub enum $Enum:ident ($side:literal) {
            $(
                $(#[$var_meta:meta])*
                $Variant:ident $([wire $wire:literal])? $([alias $($alias:literal),+])?
                $({
                    $( $(#[$f_meta:meta])* $field:ident : $ty:ty = $codec:ident ),* $(,)?
                })?
            ),* $(,)?
        }
    ) => {
        $(#[$enum_meta])*
        #[derive(Clone, Debug, PartialEq, Eq, ::serde::Serialize, ::serde::Deserialize)]
        pub enum $Enum {
            $(
                $(#[$var_meta])*
                $Variant $({ $( $(#[$f_meta])* $field: $ty ),* })?,
            )*
        }

        impl $Enum {
            /// Parses one message line (without its CR LF; a multi-line text
            /// field keeps its inner line feeds). Never panics.
            pub fn parse(line: &str) -> Result<Self, $crate::protocol::classic::ClassicParseError> {
                let start = line.trim_start_matches($crate::protocol::classic::fields::is_c_space);
                let end = start.find($crate::protocol::classic::fields::is_c_space).unwrap_or(start.len());
                let (name, rest) = start.split_at(end);
                if name.is_empty() {
                    return Err($crate::protocol::classic::ClassicParseError::Empty { side: $side });
                }
                match name {
                    $(
                        $crate::protocol::classic::grammar::wire_name!($Variant $($wire)?) $($(| $alias)+)? => {
                            #[allow(unused_mut)]
                            let mut cur = $crate::protocol::classic::fields::Cursor::new(rest, stringify!($Variant));
                            let msg = $Enum::$Variant $({
                                $( $field: <$codec as $crate::protocol::classic::fields::FieldCodec>::parse(&mut cur, stringify!($field))? ),*
                            })?;
                            cur.finish()?;
                            Ok(msg)
                        }
                    )*
                    _ => Err($crate::protocol::classic::ClassicParseError::UnknownMessageType {
                        side: $side,
                        name: $crate::protocol::classic::error::snippet(name),
                    }),
                }
            }

            /// The message name, e.g. `"PlayerDiscards"` (the C type name
            /// without its prefix; `Comment` for the message written `#`).
            pub fn message_type(&self) -> &'static str {
                match self {
                    $( $Enum::$Variant { .. } => stringify!($Variant), )*
                }
            }
        }

        impl ::std::fmt::Display for $Enum {
            /// Prints the message line exactly as the reference encodes it
            /// (without CR LF).
            fn fmt(&self, out: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                match self {
                    $(
                        $Enum::$Variant $({ $($field),* })? => {
                            out.write_str($crate::protocol::classic::grammar::wire_name!($Variant $($wire)?))?;
                            $($(
                                ::std::fmt::Write::write_char(out, ' ')?;
                                <$codec as $crate::protocol::classic::fields::FieldCodec>::write($field, out)?;
                            )*)?
                            Ok(())
                        }
                    )*
                }
            }
        }

        impl ::std::str::FromStr for $Enum {
            type Err = $crate::protocol::classic::ClassicParseError;
            fn from_str(line: &str) -> Result<Self, $crate::protocol::classic::ClassicParseError> {
                $Enum::parse(line)
            }
        }
    };
}

pub(super) use {messages, wire_name};
