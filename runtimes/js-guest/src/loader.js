// Lazy installation of the library globals (std, os, the file helpers and
// requireVendor; see library.rs). Each starts as an accessor on globalThis;
// the first read of any of them loads the library (stdlib.js, helpers.js and
// their natives: a few milliseconds most sessions never need to pay) and
// turns every one still lazy into a plain data property. Assigning one first
// just replaces it, like any writable global.
//
// Evaluated once by sb_init, before user code, so the timer functions passed
// on to os.setTimeout are the real ones.
(function (load, names) {
  "use strict";
  const defineProperty = Object.defineProperty;
  const getDesc = Object.getOwnPropertyDescriptor;
  const timers = { setTimeout, clearTimeout, setInterval, clearInterval };
  const getters = [];
  let lib = null;

  function data(name, value) {
    defineProperty(globalThis, name, {
      value,
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }

  function materialize() {
    // If loading throws (say the cell is interrupted), everything stays lazy
    // and the next read tries again.
    if (lib === null) lib = load(timers);
    for (let i = 0; i < names.length; i++) {
      const d = getDesc(globalThis, names[i]);
      if (d !== undefined && d.get === getters[i]) data(names[i], lib[names[i]]);
    }
  }

  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    const get = function () {
      materialize();
      return lib[name];
    };
    getters.push(get);
    defineProperty(globalThis, name, {
      get,
      set(value) {
        data(name, value);
      },
      enumerable: false,
      configurable: true,
    });
  }
});
