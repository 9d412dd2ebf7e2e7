//! The rules new tables are set up from, changed by admins without a
//! restart: the presets (built-in, and the custom ones admins define) and
//! the defaults (a preset and options over it; the server's flags give
//! their first value). The current [`Rules`] are held in memory, so that
//! opening a table never waits for the database, and kept in the store, so
//! that they survive a restart; each change is stored with its audit entry
//! before it takes effect, and is refused whole, changing nothing, if it is
//! not valid.
//!
//! A table takes its options when it opens: tables opened after a change
//! use the new rules, tables already open keep theirs. One server process
//! serves a database (see the README), so the copy in memory is the truth;
//! changes are made one at a time.

use std::sync::{Arc, RwLock};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::rules::preset_book::{self, CustomPreset, DefaultOptions, OptionMap, PresetBook, PresetError, PresetInfo};
use crate::store::dates::format_time;
use crate::store::{AuditEntry, Author, Change, Store, StoreError, now_us};
use crate::text::{self, TextError};

/// The rules in force: what a new table is set up from.
#[derive(Clone, Debug)]
pub struct Rules {
    /// Every preset, built-in and custom.
    pub presets: PresetBook,
    /// The defaults of new tables.
    pub defaults: DefaultOptions,
    /// When and by whom the defaults in force were stored; `None` when they
    /// are the flags'.
    pub stored: Option<(i64, Author)>,
}

/// Where the defaults in force come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DefaultsSource {
    /// The server's flags (`--preset`, `--option-file`, `--timeout`): no
    /// admin has set the defaults, or they were reset.
    Flags,
    /// An admin set them; they are stored and win over the flags at start-up.
    Admin,
}

/// The defaults of new tables as the API shows them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DefaultsView {
    /// The preset of a table whose request names none.
    pub preset: String,
    /// The options set over every new table's preset.
    #[schema(value_type = HashMap<String, crate::rules::options::OptionValue>)]
    pub options: OptionMap,
    /// Where they come from.
    pub source: DefaultsSource,
    /// When an admin set them (`YYYY-MM-DDTHH:MM:SSZ`); `null` for the flags'.
    pub updated_at: Option<String>,
    /// The same in microseconds since the epoch.
    pub updated_us: Option<i64>,
    /// The admin who set them.
    pub updated_by: Option<Author>,
    /// Every option of a table opened without a preset or options of its own.
    #[schema(value_type = HashMap<String, crate::rules::options::OptionValue>)]
    pub effective: OptionMap,
}

/// A custom preset as an admin gives it (its name apart).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PresetDraft {
    /// What it is for (one line; may be empty).
    #[serde(default)]
    pub description: String,
    /// The built-in preset it starts from (else `chinese-classical`).
    #[serde(default)]
    pub based_on: Option<String>,
    /// Options over `based_on`, by catalogue name, in their JSON types.
    #[serde(default)]
    #[schema(value_type = HashMap<String, crate::rules::options::OptionValue>)]
    pub options: OptionMap,
}

/// Why a change was refused (nothing changed), or could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RulebookError {
    /// A preset named in a request does not exist, its options are not
    /// valid, its base is not built-in, its name is taken, or it is a
    /// built-in one that cannot change.
    #[error(transparent)]
    Preset(#[from] PresetError),
    /// A name or description against the text policy.
    #[error(transparent)]
    Text(#[from] TextError),
    /// No custom preset has this name.
    #[error("no preset is called '{0}'")]
    NoSuchPreset(String),
    /// The change would leave the defaults (those in force, or the flags')
    /// without a valid preset.
    #[error("{0}")]
    InUse(String),
    /// The store failed: nothing changed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why the rules could not be loaded at start-up.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The flags name a preset that does not exist, or options that do not suit it.
    #[error("the defaults given by --preset, --option-file and --timeout: {0}")]
    Flags(PresetError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The current rules, and the one way to change them.
#[derive(Debug)]
pub struct Rulebook {
    store: Store,
    /// The defaults the flags give: in force until an admin sets others,
    /// and again after a reset.
    flags: DefaultOptions,
    current: RwLock<Arc<Rules>>,
    /// Held through each change, so that a change is checked against the
    /// rules it replaces.
    changing: tokio::sync::Mutex<()>,
}

fn preset_json(p: &CustomPreset) -> Value {
    json!({"name": p.name, "description": p.description, "based_on": p.based_on, "options": p.options})
}

fn defaults_json(d: &DefaultOptions, source: DefaultsSource) -> Value {
    json!({"preset": d.preset, "options": d.options, "source": source})
}

impl Rules {
    /// The defaults as the API shows them.
    pub fn defaults_view(&self) -> Result<DefaultsView, PresetError> {
        let (_, effective) = self.defaults.check(&self.presets)?;
        Ok(DefaultsView {
            preset: self.defaults.preset.clone(),
            options: self.defaults.options.clone(),
            source: self.source(),
            updated_at: self.stored.as_ref().map(|(at, _)| format_time(*at)),
            updated_us: self.stored.as_ref().map(|(at, _)| *at),
            updated_by: self.stored.as_ref().map(|(_, by)| by.clone()),
            effective: effective.to_json_map(),
        })
    }

    fn source(&self) -> DefaultsSource {
        if self.stored.is_some() { DefaultsSource::Admin } else { DefaultsSource::Flags }
    }
}

impl Rulebook {
    /// Reads the custom presets and the stored defaults (at start-up). The
    /// defaults an admin stored win over `flags`, which must be valid all
    /// the same (they are in force again after a reset). A custom preset or
    /// stored defaults that no longer read or are no longer valid are
    /// logged and left out (the flags' defaults are then in force), so that
    /// damaged rows do not keep the server from starting.
    pub async fn load(store: Store, flags: DefaultOptions) -> Result<Rulebook, LoadError> {
        let presets = Rulebook::load_presets(&store).await?;
        let (flags, _) = flags.check(&presets).map_err(LoadError::Flags)?;
        let stored = match store.stored_defaults().await {
            Ok(stored) => stored,
            Err(e @ StoreError::CorruptRow { .. }) => {
                tracing::error!("{e}; the flags' defaults are in force");
                None
            }
            Err(e) => return Err(e.into()),
        };
        let mut rules = Rules { presets, defaults: flags.clone(), stored: None };
        if let Some(s) = stored {
            match s.defaults.check(&rules.presets) {
                Ok((defaults, _)) => {
                    let at = format_time(s.updated_us);
                    let by = &s.updated_by.name;
                    let options = Value::Object(defaults.options.clone());
                    if defaults == flags {
                        tracing::info!(preset = %defaults.preset, "new tables use the defaults {by} set at {at}");
                    } else {
                        tracing::warn!(
                            preset = %defaults.preset,
                            %options,
                            "new tables use the defaults {by} set at {at}, not those of the flags \
                             (--preset, --option-file, --timeout): an admin's change wins until it is reset"
                        );
                    }
                    rules.defaults = defaults;
                    rules.stored = Some((s.updated_us, s.updated_by));
                }
                Err(e) => tracing::error!("the stored defaults are no longer valid ({e}); the flags' are in force"),
            }
        }
        Ok(Rulebook { store, flags, current: RwLock::new(Arc::new(rules)), changing: Default::default() })
    }

    /// The built-in presets and the custom presets stored in `store` (those
    /// that read and check; the others are logged and left out).
    pub async fn load_presets(store: &Store) -> Result<PresetBook, StoreError> {
        let mut custom = Vec::new();
        for row in store.custom_presets().await? {
            let checked = row
                .map_err(|e| e.to_string())
                .and_then(|p| PresetBook::check_custom(&p.based_on, &p.options).map(|_| p).map_err(|e| e.to_string()));
            match checked {
                Ok(p) => custom.push(p),
                Err(e) => tracing::error!("a stored custom preset is left out: {e}"),
            }
        }
        Ok(PresetBook::with_custom(custom))
    }

    /// The rules in force now.
    pub fn current(&self) -> Arc<Rules> {
        self.current.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn replace(&self, rules: Rules) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(rules);
    }

    /// Sets the defaults of new tables (an admin's change: stored, logged,
    /// and in force over the flags from now on, restarts included).
    pub async fn set_defaults(&self, actor: &Author, wanted: DefaultOptions) -> Result<DefaultsView, RulebookError> {
        let _one_at_a_time = self.changing.lock().await;
        let rules = self.current();
        let (defaults, _) = wanted.check(&rules.presets)?;
        let at_us = now_us();
        let change = Change {
            at_us,
            action: "defaults.set",
            target: "defaults".into(),
            before: Some(defaults_json(&rules.defaults, rules.source())),
            after: Some(defaults_json(&defaults, DefaultsSource::Admin)),
        };
        self.store.save_defaults(&defaults, actor, &change).await?;
        let next = Rules { presets: rules.presets.clone(), defaults, stored: Some((at_us, actor.clone())) };
        let view = next.defaults_view()?;
        self.replace(next);
        Ok(view)
    }

    /// Forgets the defaults an admin set: the flags' are in force again.
    /// Nothing is logged when no admin had set any.
    pub async fn reset_defaults(&self, actor: &Author) -> Result<DefaultsView, RulebookError> {
        let _one_at_a_time = self.changing.lock().await;
        let rules = self.current();
        if rules.stored.is_none() {
            return Ok(rules.defaults_view()?);
        }
        // The flags are kept valid: a preset they name cannot be deleted,
        // nor changed so that their options no longer suit it.
        let (flags, _) = self.flags.check(&rules.presets)?;
        let change = Change {
            at_us: now_us(),
            action: "defaults.reset",
            target: "defaults".into(),
            before: Some(defaults_json(&rules.defaults, DefaultsSource::Admin)),
            after: Some(defaults_json(&flags, DefaultsSource::Flags)),
        };
        self.store.forget_defaults(actor, &change).await?;
        let next = Rules { presets: rules.presets.clone(), defaults: flags, stored: None };
        let view = next.defaults_view()?;
        self.replace(next);
        Ok(view)
    }

    /// Defines a custom preset.
    pub async fn create_preset(
        &self,
        actor: &Author,
        name: &str,
        draft: PresetDraft,
    ) -> Result<PresetInfo, RulebookError> {
        let _one_at_a_time = self.changing.lock().await;
        let rules = self.current();
        let name = text::preset_name(name)?;
        let description = text::description(&draft.description)?;
        rules.presets.check_name_free(&name)?;
        let based_on = draft.based_on.unwrap_or_else(|| crate::rules::presets::DEFAULT_PRESET.to_string());
        let options = PresetBook::check_custom(&based_on, &draft.options)?;
        let at_us = now_us();
        let preset = CustomPreset { name, description, based_on, options, created_us: at_us, updated_us: at_us };
        let change = Change {
            at_us,
            action: "preset.create",
            target: format!("preset/{}", preset.name),
            before: None,
            after: Some(preset_json(&preset)),
        };
        if !self.store.create_preset(&preset, actor, &change).await? {
            // A stored row of that name that did not read at start-up.
            let taken = PresetError::Taken { name: preset.name.clone(), existing: preset.name, built_in: false };
            return Err(taken.into());
        }
        let presets = rules.presets.with(preset.clone());
        let info = presets.info(&preset.name)?;
        self.replace(Rules { presets, ..(*rules).clone() });
        Ok(info)
    }

    /// Replaces a custom preset's description, base and options. Refused if
    /// the defaults in force, or the flags', would no longer be valid.
    pub async fn update_preset(
        &self,
        actor: &Author,
        name: &str,
        draft: PresetDraft,
    ) -> Result<PresetInfo, RulebookError> {
        let _one_at_a_time = self.changing.lock().await;
        let rules = self.current();
        let old = self.custom(&rules, name)?;
        let description = text::description(&draft.description)?;
        let based_on = draft.based_on.unwrap_or_else(|| crate::rules::presets::DEFAULT_PRESET.to_string());
        let options = PresetBook::check_custom(&based_on, &draft.options)?;
        let at_us = now_us();
        let preset = CustomPreset {
            name: old.name.clone(),
            description,
            based_on,
            options,
            created_us: old.created_us,
            updated_us: at_us,
        };
        let presets = rules.presets.with(preset.clone());
        if let Err(e) = rules.defaults.check(&presets) {
            return Err(RulebookError::InUse(format!(
                "the defaults of new tables use preset '{}' with options {}; after this change they would not \
                 be valid: {e}",
                rules.defaults.preset,
                Value::Object(rules.defaults.options.clone())
            )));
        }
        if let Err(e) = self.flags.check(&presets) {
            return Err(RulebookError::InUse(format!(
                "the server's flags (--preset, --option-file, --timeout) use preset '{}'; after this change \
                 they would not be valid: {e}",
                self.flags.preset
            )));
        }
        let change = Change {
            at_us,
            action: "preset.update",
            target: format!("preset/{}", preset.name),
            before: Some(preset_json(old)),
            after: Some(preset_json(&preset)),
        };
        if !self.store.update_preset(&preset, actor, &change).await? {
            return Err(RulebookError::NoSuchPreset(preset.name));
        }
        let info = presets.info(&preset.name)?;
        self.replace(Rules { presets, ..(*rules).clone() });
        Ok(info)
    }

    /// Deletes a custom preset. Refused while the defaults in force, or the
    /// flags', name it: tables could no longer be opened by default.
    pub async fn delete_preset(&self, actor: &Author, name: &str) -> Result<(), RulebookError> {
        let _one_at_a_time = self.changing.lock().await;
        let rules = self.current();
        if preset_book::built_in(name).is_some() {
            return Err(PresetError::ReadOnly(name.to_string()).into());
        }
        if rules.defaults.preset == name {
            return Err(RulebookError::InUse(format!(
                "preset '{name}' is the default preset of new tables: set other defaults first"
            )));
        }
        if self.flags.preset == name {
            return Err(RulebookError::InUse(format!(
                "preset '{name}' is the one the server's flags name (--preset or the option file's Preset line), \
                 in force again if the defaults are reset: restart the server without it first"
            )));
        }
        // A stored row that did not read at start-up is not in the book,
        // but may be deleted all the same. A name no preset could have is
        // not looked for (Postgres refuses NUL, for one).
        let old = rules.presets.custom_named(name);
        if old.is_none() && text::preset_name(name).ok().as_deref() != Some(name) {
            return Err(RulebookError::NoSuchPreset(name.to_string()));
        }
        let change = Change {
            at_us: now_us(),
            action: "preset.delete",
            target: format!("preset/{name}"),
            before: Some(old.map_or_else(|| json!({"name": name, "unreadable": true}), preset_json)),
            after: None,
        };
        if !self.store.delete_preset(name, actor, &change).await? {
            return Err(RulebookError::NoSuchPreset(name.to_string()));
        }
        self.replace(Rules { presets: rules.presets.without(name), ..(*rules).clone() });
        Ok(())
    }

    /// The custom preset called `name`: a built-in one is read-only.
    fn custom<'r>(&self, rules: &'r Rules, name: &str) -> Result<&'r CustomPreset, RulebookError> {
        if preset_book::built_in(name).is_some() {
            return Err(PresetError::ReadOnly(name.to_string()).into());
        }
        rules.presets.custom_named(name).ok_or_else(|| RulebookError::NoSuchPreset(name.to_string()))
    }

    /// Logs a change an admin made elsewhere (to an account).
    pub async fn record(&self, actor: &Author, change: &Change) -> Result<i64, StoreError> {
        self.store.record_change(actor, change).await
    }

    /// Up to `limit` entries of the audit log numbered below `before`, about
    /// `target` only if given, newest first.
    pub async fn audit(
        &self,
        before: Option<i64>,
        target: Option<&str>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        self.store.audit_log(before, target, limit).await
    }
}
