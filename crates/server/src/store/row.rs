//! Rows read into structs by their columns' names.
//!
//! [`from_row!`] does what sqlx's `#[derive(FromRow)]` does for the plain
//! structs the queries read, without sqlx's procedural macros: those
//! compile a second copy of both database drivers (SQLite's C among them)
//! for the compiler, which cost every cold build and clippy run about a
//! minute (docs/performance.md, "CI").

/// Declares a struct and reads it from an [`sqlx::any::AnyRow`], each field
/// from the column of the same name: wrap the struct's definition in it.
macro_rules! from_row {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident : $type:ty),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $($(#[$field_meta])* $field_vis $field: $type),*
        }

        impl<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> for $name {
            fn from_row(row: &'r sqlx::any::AnyRow) -> Result<Self, sqlx::Error> {
                use sqlx::Row as _;
                Ok($name { $($field: row.try_get(stringify!($field))?),* })
            }
        }
    };
}

pub(crate) use from_row;

#[cfg(test)]
mod tests {
    use sqlx::any::AnyPoolOptions;

    from_row! {
        /// A row of every kind of column the store reads.
        #[derive(Debug, PartialEq)]
        struct Sample {
            /// A number.
            n: i64,
            name: String,
            maybe: Option<String>,
        }
    }

    #[tokio::test]
    async fn each_field_is_read_from_its_own_column_whatever_their_order() {
        sqlx::any::install_default_drivers();
        let pool = AnyPoolOptions::new().max_connections(1).connect("sqlite::memory:").await.unwrap();
        let row: Sample =
            sqlx::query_as("SELECT NULL AS maybe, 'east' AS name, 7 AS n").fetch_one(&pool).await.unwrap();
        assert_eq!(row, Sample { n: 7, name: "east".into(), maybe: None });
        let missing = sqlx::query_as::<_, Sample>("SELECT 7 AS n, 'east' AS name").fetch_one(&pool).await;
        assert!(matches!(missing, Err(sqlx::Error::ColumnNotFound(c)) if c == "maybe"), "a missing column is an error");
    }
}
