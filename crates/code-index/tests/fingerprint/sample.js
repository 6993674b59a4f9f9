// A module that uses most of what JavaScript extraction looks at.
import fs from 'fs';
import * as utils from './utils';
import { Store, openStore } from './store.js';
const path = require('path');

export const LIMIT = 10;

/** Builds a linter. */
export function makeLinter(dir) {
  return new Linter(new Store(dir));
}

class Base {
  save() { this.flush(); }
  flush() {}
}

export class Linter extends Base {
  cache = new Cache();
  constructor(store) {
    super();
    this.store = store;
  }
  check(files) {
    let count = 0;
    for (const f of files) {
      count += this.cache.get(f);
      this.save();
    }
    console.log(utils.format(count));
    return count;
  }
}

const arrow = (x) => x + 1;

async function main() {
  const linter = makeLinter('.');
  linter.check(['a.js']);
  const s = new Store('x');
  s.close();
  const st = await openStore('y');
  fs.readFileSync(path.join('a', 'b'));
  new Cache().get('k');
  arrow(2);
}
