// A file that uses most of what Java extraction looks at.
package com.example.lint;

import java.util.HashMap;
import java.util.List;
import com.example.store.Store;

/** Checks files. */
public class Linter extends Base implements Checker {
    private final Store store;
    private HashMap<String, Integer> cache = new HashMap<>();
    public static final int LIMIT = 10;

    public Linter(Store store) {
        this.store = store;
    }

    @Override
    public int check(List<String> files) {
        int count = 0;
        for (String f : files) {
            count += count(f);
            this.save();
        }
        store.flush();
        return count;
    }

    private int count(String f) {
        return cache.getOrDefault(f, 0);
    }

    static Linter make(Store s) {
        Linter l = new Linter(s);
        l.check(List.of("a"));
        var other = new Linter(Store.open("db"));
        other.count("x");
        var r = other.reader();
        r.next();
        return l;
    }

    enum Level { LOW, HIGH }

    interface Listener { void changed(Linter l); }

    record Pair(String a, int b) {}
}
