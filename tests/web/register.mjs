// Given to Node with `--import` by tests/web_logic.rs: see esm-hooks.mjs.
import { register } from 'node:module';

register('./esm-hooks.mjs', import.meta.url);
