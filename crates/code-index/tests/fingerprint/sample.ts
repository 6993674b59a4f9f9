// A module that uses most of what TypeScript extraction looks at.
import * as utils from './utils';
import { Store, openStore } from './store';

export interface Checker {
  check(files: string[]): number;
}

export type Outcome = 'clean' | { dirty: number };

enum Level { Low, High }

/** Builds a linter. */
export function makeLinter(dir: string): Linter {
  return new Linter(new Store(dir));
}

async function loadLinter(): Promise<Linter> {
  return makeLinter('.');
}

abstract class Base {
  protected level: Level = Level.Low;
  save(): void { this.flush(); }
  abstract flush(): void;
}

export class Linter extends Base implements Checker {
  private cache: Cache;
  store = new Store('s');
  constructor(private readonly root: Store) {
    super();
    this.cache = new Cache();
  }
  flush(): void {}
  check(files: string[]): number {
    let count = 0;
    for (const f of files) {
      count += this.cache.get(f);
    }
    this.store.close();
    return utils.sum(count);
  }
}

export async function main(other: Linter): Promise<void> {
  const linter = await loadLinter();
  linter.check(['a.ts']);
  other.save();
  const s: Store = await openStore('y');
  s.close();
  namespace Inner { export const x = 1; }
}
