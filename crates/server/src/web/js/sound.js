// Sounds, drawn with the Web Audio API (no sound files): a chime when it is
// your turn, a knock when someone claims, a tick as your claim deadline runs
// out. They play in a background tab too. Muted by default until the player
// turns them on (browsers allow sound only after a click anyway); the choice
// is remembered.

const KEY = 'mj.sound';
let ctx = null;

/** Are sounds on? */
export function soundOn() {
  return localStorage.getItem(KEY) === 'on';
}

/** Turns sounds on or off (called from a click, which lets the browser play). */
export function setSound(on) {
  localStorage.setItem(KEY, on ? 'on' : 'off');
  if (on) {
    ctx ??= new AudioContext();
    ctx.resume();
    play('turn');
  }
}

const SOUNDS = {
  turn: [[660, 0, 0.12], [880, 0.13, 0.18]],
  claim: [[330, 0, 0.09], [247, 0.1, 0.12]],
  tick: [[1200, 0, 0.04]],
  win: [[523, 0, 0.12], [659, 0.12, 0.12], [784, 0.24, 0.25]],
};

/** Plays one of the sounds: 'turn', 'claim', 'tick' or 'win'. */
export function play(name) {
  if (!soundOn()) return;
  try {
    ctx ??= new AudioContext();
    if (ctx.state === 'suspended') ctx.resume();
    const now = ctx.currentTime;
    for (const [freq, start, length] of SOUNDS[name] ?? []) {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.frequency.value = freq;
      osc.type = 'sine';
      gain.gain.setValueAtTime(0.0001, now + start);
      gain.gain.exponentialRampToValueAtTime(0.25, now + start + 0.01);
      gain.gain.exponentialRampToValueAtTime(0.0001, now + start + length);
      osc.connect(gain).connect(ctx.destination);
      osc.start(now + start);
      osc.stop(now + start + length + 0.02);
    }
  } catch {
    // No audio device: play silently.
  }
}
