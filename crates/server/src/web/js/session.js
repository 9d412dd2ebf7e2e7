// Who we are: the logged-in account (null for a guest), shown in the page's
// header with the log-in, register and log-out controls.

import { api, markLoggedIn } from './api.js';
import { h, fill, toast } from './dom.js';

/** What every screen shares: the account (null for a guest) and how to change it. */
export const session = {
  me: null,
  listeners: new Set(),
  set(me) {
    this.me = me;
    markLoggedIn(!!me);
    renderAccount();
    for (const f of this.listeners) f(me);
  },
};

function renderAccount() {
  const box = document.getElementById('account');
  if (!box) return;
  if (session.me) {
    fill(box,
      h('span', {}, 'Signed in as ', h('strong', { id: 'me-name' }, session.me.name)),
      h('button', { class: 'link', onclick: logout }, 'Log out'));
  } else {
    fill(box, h('span', { class: 'muted-light' }, 'Playing as a guest'),
      h('button', { class: 'link', onclick: () => openAuthDialog('login') }, 'Log in'),
      h('button', { class: 'link', onclick: () => openAuthDialog('register') }, 'Register'));
  }
}

async function logout() {
  try { await api('POST', '/auth/logout'); } catch { /* the session is gone either way */ }
  session.set(null);
  toast('Logged out');
}

/** The log-in / register dialog. */
export function openAuthDialog(mode = 'login') {
  const error = h('p', { class: 'error-text', role: 'alert' });
  const name = h('input', { id: 'auth-name', name: 'username', autocomplete: 'username', required: true, maxlength: 32 });
  const password = h('input', { id: 'auth-password', type: 'password', name: 'password', autocomplete: mode === 'login' ? 'current-password' : 'new-password', required: true, minlength: 8 });
  const dialog = h('dialog', { 'aria-labelledby': 'auth-title' });
  const form = h('form', { method: 'dialog' },
    h('div', { class: 'dialog-body' },
      h('h2', { id: 'auth-title' }, mode === 'login' ? 'Log in' : 'Register an account'),
      h('p', { class: 'muted' }, mode === 'login' ? 'Your games and standings follow your account on every device.' : 'Choose a name (up to 32 characters) and a password of at least 8 characters.'),
      h('p', {}, h('label', { for: 'auth-name' }, 'Name'), ' ', name),
      h('p', {}, h('label', { for: 'auth-password' }, 'Password'), ' ', password),
      error),
    h('div', { class: 'dialog-foot' },
      h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel'),
      h('button', { type: 'submit', class: 'primary', id: 'auth-submit' }, mode === 'login' ? 'Log in' : 'Register')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    try {
      const grant = await api('POST', mode === 'login' ? '/auth/login' : '/auth/register', { name: name.value.trim(), password: password.value });
      session.set(grant.user);
      dialog.close();
      toast(mode === 'login' ? `Welcome back, ${grant.user.name}` : `Welcome, ${grant.user.name}`);
    } catch (err) {
      error.textContent = err.message;
    }
  });
  dialog.append(form);
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  name.focus();
}

