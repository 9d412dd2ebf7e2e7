// The client's modules (crates/server/src/web/js/*.js) are ES modules written for the
// browser, and no package.json says so: Node before 20.19 and 22.7 would read
// a `.js` file as CommonJS. This hook has Node load them as modules.

const CLIENT = new URL('../../crates/server/src/web/js/', import.meta.url).href;

export async function load(url, context, nextLoad) {
  if (url.startsWith(CLIENT) && url.endsWith('.js')) return nextLoad(url, { ...context, format: 'module' });
  return nextLoad(url, context);
}
