use expect_test::{Expect, expect};

use super::*;
use code_index::{Language, Project};

fn project(fixture: &str) -> Project {
    with_manifests(fixture).0
}

/// The fixture's source files as a project, and its other files (`Cargo.toml`) as
/// manifests.
fn with_manifests(fixture: &str) -> (Project, Vec<Manifest>) {
    crate::fixture::project_and_manifests(fixture)
}

fn check_calls(fixture: &str, expect: Expect) {
    let (p, manifests) = with_manifests(fixture);
    let g = Graphs::build(&p, &manifests);
    let mut out = String::new();
    for e in g.symbol_edges() {
        if !e.kind.is_call() {
            continue;
        }
        let from = e.from.map_or_else(
            || format!("{}:<top>", p.file(e.from_file).path),
            |d| p.def(d).qualified_name.clone(),
        );
        let to = p.def(e.to);
        out.push_str(&format!(
            "{from} -> {}:{} ({:?}, {:.2})\n",
            p.file(e.to.file).path,
            to.qualified_name,
            e.resolution,
            e.weight
        ));
    }
    expect.assert_eq(&out);
}

const SHOP: &str = r#"
    //- shop/__init__.py
    //- shop/cart.py
    from shop.pricing import price_of, Discount

    class Cart:
        def __init__(self):
            self.items = []

        def add(self, item):
            self.items.append(item)
            self.total()

        def total(self):
            d = Discount()
            return sum(price_of(i) for i in self.items) - d.amount()

    def helper():
        return Cart().total()
    //- shop/pricing.py
    class Discount:
        def amount(self):
            return 0

    def price_of(item):
        return item.price

    def total():
        return 1
    //- shop/report.py
    import shop.cart

    def report():
        c = shop.cart.Cart()
        return c.total() + render()

    def render():
        return helper()
    //- other/helpers.py
    def helper():
        return 2
    "#;

#[test]
fn calls_resolve_by_scope_file_import_and_uniqueness() {
    check_calls(
        SHOP,
        expect![[r#"
            Cart.add -> shop/cart.py:Cart.total (Local, 1.00)
            Cart.total -> shop/pricing.py:Discount (Imported, 1.00)
            Cart.total -> shop/pricing.py:price_of (Imported, 1.00)
            Cart.total -> shop/pricing.py:Discount.amount (Receiver, 1.00)
            helper -> shop/cart.py:Cart (SameFile, 1.00)
            helper -> shop/cart.py:Cart.total (Receiver, 1.00)
            report -> shop/cart.py:Cart (Imported, 1.00)
            report -> shop/cart.py:Cart.total (Receiver, 1.00)
            report -> shop/report.py:render (SameFile, 1.00)
            render -> shop/cart.py:helper (Imported, 1.00)
        "#]],
    );
}

#[test]
fn call_closures_and_file_graph() {
    let p = project(SHOP);
    let g = Graphs::build(&p, &[]);
    let find = |q: &str| p.all_defs().find(|&d| p.def(d).qualified_name == q).unwrap();
    let show = |v: Vec<(DefId, u32, Resolution)>| -> Vec<String> {
        v.into_iter().map(|(d, dist, _)| format!("{}@{dist}", p.def(d).qualified_name)).collect()
    };
    // `render` calls the `helper` of the module report.py imports, not other/helpers.py.
    assert_eq!(
        show(g.call_closure(find("report"), 3, false)),
        [
            "Cart@1",
            "Cart.total@1",
            "render@1",
            "Discount@2",
            "price_of@2",
            "Discount.amount@2",
            "helper@2"
        ]
    );
    assert_eq!(
        show(g.call_closure(find("Discount.amount"), 2, true)),
        ["Cart.total@1", "Cart.add@2", "helper@2", "report@2"]
    );
    let files = |v: Vec<(FileId, u32)>| -> Vec<String> {
        v.into_iter().map(|(f, d)| format!("{}@{d}", p.file(f).path)).collect()
    };
    let report = p.file_id("shop/report.py").unwrap();
    assert_eq!(files(g.file_closure(&[report], 2, false)), ["shop/cart.py@1", "shop/pricing.py@2"]);
    let pricing = p.file_id("shop/pricing.py").unwrap();
    assert_eq!(files(g.file_closure(&[pricing], 5, true)), ["shop/cart.py@1", "shop/report.py@2"]);
}

#[test]
fn calls_never_resolve_to_modules() {
    // `analysis::target()` calls the function, not the module `target` the crate
    // root declares (a regression: modules counted as callable containers).
    check_calls(
        r#"
        //- src/lib.rs
        mod target;
        pub use target::Target;
        //- src/target.rs
        pub struct Target;
        //- src/cmd/analysis.rs
        pub fn target() {}
        //- src/cmd/graph.rs
        use crate::target::Target;
        fn run() { analysis::target(); }
        "#,
        expect![[r#"
            run -> src/cmd/analysis.rs:target (Global, 0.70)
        "#]],
    );
}

#[test]
fn bare_calls_never_mean_methods_where_the_language_says_so() {
    // Python: `check(arg)` calls the loop's callback, not the `check` method of the
    // imported class, nor the sibling method (that would be `self.check`): no edge.
    // `linter.check(...)` may mean any `check` method; without receiver types the
    // nearest one wins, as a guess (ambiguous, 0.3). Java: a bare `check()` is a
    // method of the class or its bases, and never the Python one.
    check_calls(
        r#"
        //- lint/linter.py
        class Linter:
            def check(self, files):
                pass
        //- lint/special.py
        from lint.linter import Linter
        class Special:
            def check(self, node):
                pass
            def visit(self, node, linter):
                for arg, check in ((node, self.check),):
                    check(arg)
                linter.check([node])
        //- src/Base.java
        class Base { void check() {} }
        //- src/Sub.java
        class Sub extends Base { void run() { check(); } }
        "#,
        expect![[r#"
            Special.visit -> lint/special.py:Special.check (NameOnly, 1.00)
            Sub.run -> src/Base.java:Base.check (Global, 0.70)
        "#]],
    );
}

#[test]
fn calls_on_self_mean_methods_of_the_class_or_its_bases() {
    // `self.save()` in `Order`: not the module-level `save` of the same file, but
    // the method `Order` inherits from the imported `Base`. `self.total()` is the
    // class's own method. `self.audit()` is `Root.audit`, two levels up in a file
    // `order.py` does not import, not the `audit` of `Invoice` next to it.
    check_calls(
        r#"
        //- shop/root.py
        class Root:
            def audit(self):
                pass
        //- shop/base.py
        from shop.root import Root
        class Base(Root):
            def save(self):
                pass
        //- shop/order.py
        from shop.base import Base
        def save(order):
            pass
        class Invoice:
            def audit(self):
                pass
        class Order(Base):
            def total(self):
                return 1
            def store(self):
                self.total()
                self.save()
                save(self)
                self.audit()
        "#,
        expect![[r#"
            Order.store -> shop/order.py:Order.total (Local, 1.00)
            Order.store -> shop/base.py:Base.save (Receiver, 1.00)
            Order.store -> shop/order.py:save (SameFile, 1.00)
            Order.store -> shop/root.py:Root.audit (Receiver, 1.00)
        "#]],
    );
}

#[test]
fn rust_calls_stay_within_the_crates_a_crate_depends_on() {
    // `value.parse()` in `index` cannot mean `llm`'s `parse`: `index` does not
    // depend on `llm`. `app` depends on `index`, which depends on `proto`, so `app`
    // reaches `proto`'s `encode` through it.
    check_calls(
        r#"
        //- Cargo.toml
        [workspace]
        members = ["crates/*"]
        //- crates/proto/Cargo.toml
        [package]
        name = "proto"
        //- crates/proto/src/lib.rs
        pub fn encode() {}
        //- crates/llm/Cargo.toml
        [package]
        name = "llm"
        [dependencies]
        serde = "1"
        //- crates/llm/src/lib.rs
        pub struct Reply;
        impl Reply { pub fn parse(&self) {} }
        //- crates/index/Cargo.toml
        [package]
        name = "index"
        [dependencies]
        proto = { path = "../proto" }
        //- crates/index/src/lib.rs
        pub fn load(value: &str) { value.parse(); }
        //- crates/app/Cargo.toml
        [package]
        name = "app"
        [dependencies]
        index.workspace = true
        [dev-dependencies.llm]
        path = "../llm"
        //- crates/app/src/main.rs
        fn main() { index::load(""); proto_encode(); }
        fn proto_encode() { encode(); }
        //- crates/app/tests/reply.rs
        fn t(r: Reply) { r.parse(); }
        "#,
        expect![[r#"
            main -> crates/index/src/lib.rs:load (Global, 0.70)
            main -> crates/app/src/main.rs:proto_encode (SameFile, 1.00)
            proto_encode -> crates/proto/src/lib.rs:encode (Global, 0.70)
            t -> crates/llm/src/lib.rs:Reply::parse (Receiver, 1.00)
        "#]],
    );
}

#[test]
fn cargo_dependency_tables() {
    let deps = crate::resolve::cargo_dependencies(
        r#"
        [package]
        name = "x"
        version = "0.1.0"
        [dependencies]
        serde = { version = "1", features = ["derive"] } # a comment
        code-index.workspace = true
        "quoted" = "1"
        pb = { package = "prost-build", version = "0.13" }
        [target.'cfg(unix)'.dependencies]
        libc = "0.2"
        [build-dependencies.cc]
        version = "1"
        [features]
        default = ["std"]
        "#,
    );
    let names: Vec<String> = deps.iter().map(|(alias, real)| format!("{alias}={real}")).collect();
    assert_eq!(
        names,
        [
            "serde=serde",
            "code_index=code_index",
            "quoted=quoted",
            "pb=prost_build",
            "libc=libc",
            "cc=cc"
        ]
    );
}

#[test]
fn code_outside_tests_never_calls_into_tests_by_name_alone() {
    // `render` is defined once in the sources and once in a test: by name, the
    // source means its own (Global, not Ambiguous); `helper` exists only in a test,
    // so the source's call stays unresolved, while an explicit import is kept and
    // the test's own calls still reach both.
    check_calls(
        r#"
        //- src/view.js
        export function render() {}
        //- src/app.js
        export function show() { render(); helper(); }
        //- src/debug.js
        import { fixture } from '../test/fixtures.js';
        export function dump() { fixture(); }
        //- src/__tests__/view.test.js
        function render() {}
        function helper() {}
        test('x', () => { show(); helper(); });
        //- test/fixtures.js
        export function fixture() {}
        "#,
        expect![[r#"
            show -> src/view.js:render (Global, 0.70)
            dump -> test/fixtures.js:fixture (Imported, 1.00)
            src/__tests__/view.test.js:<top> -> src/app.js:show (Global, 0.70)
            src/__tests__/view.test.js:<top> -> src/__tests__/view.test.js:helper (SameFile, 1.00)
        "#]],
    );
}

#[test]
fn member_calls_follow_the_receivers_stated_type() {
    // `linter.check()` in `Reporter.run` is `Linter.check`, not the `check` of the
    // class it is written in; `save` is `Base.save`, which `Linter` inherits (not
    // `Reporter.save`); a
    // method of `str` or of an imported `Session` is never the project's `upper`,
    // nor `os.getcwd()` our `getcwd`; a type of unknown origin (`Widget`) leaves it
    // to the name (the nearest `upper`, a guess), and a module of ours
    // (`shop.upper()`) to its function. `hooks.save()` in a function is a guess
    // too: a method of the same file matched by its name alone.
    check_calls(
        r#"
        //- lint.py
        import os
        import shop
        from base import Base
        from requests import Session
        class Linter(Base):
            def check(self):
                pass
        class Reporter:
            def check(self):
                pass
            def upper(self):
                pass
            def save(self):
                pass
            def run(self, linter: Linter, name: str):
                linter.check()
                linter.save()
                name.upper()
                other = Reporter()
                other.check()
                Session().upper()
                session = Session()
                session.upper()
                w = Widget()
                w.upper()
                os.getcwd()
                shop.upper()
        def merge(hooks):
            return hooks.save()
        //- base.py
        class Base:
            def save(self):
                pass
        def getcwd():
            pass
        //- shop.py
        def upper():
            pass
        "#,
        expect![[r#"
            Reporter.run -> lint.py:Linter.check (Receiver, 1.00)
            Reporter.run -> base.py:Base.save (Receiver, 1.00)
            Reporter.run -> lint.py:Reporter (SameFile, 1.00)
            Reporter.run -> lint.py:Reporter.check (Receiver, 1.00)
            Reporter.run -> lint.py:Reporter.upper (NameOnly, 1.00)
            Reporter.run -> shop.py:upper (Imported, 1.00)
            merge -> lint.py:Reporter.save (NameOnly, 1.00)
        "#]],
    );
    // Every Rust `new` is a method of some type: the path says which. And
    // `String::len` is not the project's `len`.
    check_calls(
        r#"
        //- src/lib.rs
        pub struct Alpha;
        impl Alpha { pub fn new() -> Alpha { Alpha } }
        pub struct Beta;
        impl Beta { pub fn new() -> Beta { Beta } pub fn go(&self) {} pub fn len(&self) {} }
        pub fn main() {
            let a = Alpha::new();
            let b = Beta::new();
            b.go();
            let s = String::new();
            s.len();
        }
        "#,
        expect![[r#"
            main -> src/lib.rs:Alpha::new (Receiver, 1.00)
            main -> src/lib.rs:Beta::new (Receiver, 1.00)
            main -> src/lib.rs:Beta::go (Receiver, 1.00)
        "#]],
    );
    // A classmethod's `cls(..)` makes an instance of its own class, so the
    // `validate` it calls is the one `Config` inherits, not the first `validate`
    // of the file (`Schema.validate`, which a name alone would pick).
    check_calls(
        r#"
        //- config.py
        class Schema:
            def validate(self):
                pass
        class Base:
            def validate(self):
                pass
        class Config(Base):
            @classmethod
            def load(cls, path):
                made = cls()
                made.validate()
                return made
        "#,
        expect![[r#"
            Config.load -> config.py:Base.validate (Receiver, 1.00)
        "#]],
    );
}

#[test]
fn base_classes_from_class_headers() {
    for (lang, signature, want) in [
        (
            Language::Python,
            "class Cat(animals.Pet, Generic[K, V], metaclass=ABCMeta):",
            vec!["Pet", "Generic"],
        ),
        (Language::Python, "class Pet: # [abstract-method] (see below)", vec![]),
        (Language::Python, "class Pet():", vec![]),
        (
            Language::TypeScript,
            "export class M extends Map<string, { a: Ref<number> }> implements I",
            vec!["Map"],
        ),
        (Language::JavaScript, "class Button extends ui.Widget", vec!["Widget"]),
        (Language::Rust, "struct Foo(Bar)", vec![]),
    ] {
        assert_eq!(base_names(signature, lang), want, "{signature}");
    }
}

#[test]
fn a_variable_holds_what_its_function_is_declared_to_return() {
    // `make_linter()` returns a `Linter`, so `lin.check()` is `Linter.check`, not
    // the `check` of the class it is written in; `make_names()` returns a `list`,
    // whose `append` is not ours.
    check_calls(
        r#"
        //- lint.py
        class Linter:
            def check(self):
                pass
        //- factory.py
        from lint import Linter
        def make_linter() -> "Linter":
            return Linter()
        def make_names() -> list[str]:
            return []
        //- use.py
        from factory import make_linter, make_names
        class Other:
            def check(self):
                pass
            def append(self):
                pass
            def run(self):
                lin = make_linter()
                lin.check()
                names = make_names()
                names.append()
        "#,
        expect![[r#"
            make_linter -> lint.py:Linter (Imported, 1.00)
            Other.run -> factory.py:make_linter (Imported, 1.00)
            Other.run -> lint.py:Linter.check (Receiver, 1.00)
            Other.run -> factory.py:make_names (Imported, 1.00)
        "#]],
    );
    // In TypeScript, what `await` unwraps of a `Promise`.
    check_calls(
        r#"
        //- src/config.ts
        export class Config { get(key: string) {} }
        export async function load(path: string): Promise<Config> { return new Config(); }
        //- src/app.ts
        import { load } from './config';
        class Cache { get(key: string) {} }
        export async function main() {
          const config = await load('x');
          config.get('a');
        }
        "#,
        expect![[r#"
            load -> src/config.ts:Config (SameFile, 1.00)
            main -> src/config.ts:load (Imported, 1.00)
            main -> src/config.ts:Config.get (Receiver, 1.00)
        "#]],
    );
    // And in Rust, what `?` unwraps of it.
    check_calls(
        r#"
        //- src/lib.rs
        pub struct Cache;
        impl Cache { pub fn get(&self) {} }
        pub struct Store;
        impl Store { pub fn get(&self) {} }
        pub fn open() -> Result<Store, String> { Ok(Store) }
        pub fn run() -> Result<(), String> {
            let store = open()?;
            store.get();
            Ok(())
        }
        "#,
        expect![[r#"
            run -> src/lib.rs:open (SameFile, 1.00)
            run -> src/lib.rs:Store::get (Receiver, 1.00)
        "#]],
    );
}

#[test]
fn a_call_through_an_imported_module_means_that_modules_function() {
    // `utils.format()` is `format` of `utils.ts`, not the `format` of the class it
    // is written in; `fs.format()` is Node's, not ours.
    check_calls(
        r#"
        //- src/utils.ts
        export function format(s: string) { return s; }
        //- src/app.ts
        import * as utils from './utils';
        import fs from 'fs';
        class Page {
          format() {}
          render() {
            utils.format('a');
            fs.format('b');
          }
        }
        "#,
        expect![[r#"
            Page.render -> src/utils.ts:format (Imported, 1.00)
        "#]],
    );
}

#[test]
fn java_csharp_and_go_calls_follow_declared_types() {
    // Every `check`/`Check` is defined twice, so by name alone each call would be
    // ambiguous; the declared types pick one. `Base.save` is reached through the
    // class header, `Open` through Go's declared result.
    check_calls(
        r#"
        //- src/Linter.java
        class Base { void save() {} }
        class Linter extends Base {
            private Store store;
            int check() { return 0; }
            void run(Rules rules) {
                store.check();
                Linter l = new Linter();
                l.save();
                rules.check();
                "x".trim();
            }
        }
        //- src/Store.java
        class Store { int check() { return 1; } }
        //- src/Linter.cs
        class Base { public void Save() {} }
        class Linter : Base, IChecker {
            private Store store;
            public int Check() { return 0; }
            void Run() { store.Check(); var l = new Linter(); l.Save(); }
        }
        class Store { public int Check() { return 1; } }
        //- lint/lint.go
        package lint
        type Linter struct{}
        func (l *Linter) Check() int { return 0 }
        type DB struct{}
        func (d *DB) Check() int { return 1 }
        func Open() (*DB, error) { return nil, nil }
        func run(l *Linter) { d, _ := Open(); d.Check(); l.Check() }
        "#,
        expect![[r#"
            Linter.run -> src/Store.java:Store.check (Receiver, 1.00)
            Linter.run -> src/Linter.java:Linter (SameFile, 1.00)
            Linter.run -> src/Linter.java:Base.save (Receiver, 1.00)
            Linter.Run -> src/Linter.cs:Store.Check (Receiver, 1.00)
            Linter.Run -> src/Linter.cs:Linter (SameFile, 1.00)
            Linter.Run -> src/Linter.cs:Base.Save (Receiver, 1.00)
            run -> lint/lint.go:Open (SameFile, 1.00)
            run -> lint/lint.go:DB.Check (Receiver, 1.00)
            run -> lint/lint.go:Linter.Check (Receiver, 1.00)
        "#]],
    );
}

#[test]
fn calls_follow_what_methods_are_declared_to_return() {
    // Every `next`/`Next` is defined twice, so by name alone each call is
    // ambiguous (or the same file's); the receiver's chain of declared return types
    // picks one: a method of the receiver's type, of the enclosing class (`self.`,
    // Java's and C#'s bare calls), of a base, or a Go package's function.
    check_calls(
        r#"
        //- lint.py
        class Reader:
            def next(self):
                pass
        class Base:
            def reader(self) -> "Reader":
                return Reader()
        class Linter(Base):
            def next(self):
                pass
            def run(self, other: "Linter"):
                self.reader().next()
                r = other.reader()
                r.next()
        //- src/Linter.java
        class Reader { void next() {} }
        class Linter {
            void next() {}
            Reader reader() { return new Reader(); }
            void run(Linter other) {
                var r = reader();
                r.next();
                other.reader().next();
            }
        }
        //- src/Linter.cs
        class Reader { public void Next() {} }
        class Linter {
            public void Next() {}
            public async Task<Reader> ReaderAsync() { return new Reader(); }
            async void Run() { var r = await ReaderAsync(); r.Next(); }
        }
        //- go.mod
        module example.com/m
        //- store/store.go
        package store
        type Reader struct{}
        func (r *Reader) Next() {}
        func Open() *Reader { return nil }
        //- lint/lint.go
        package lint
        import "example.com/m/store"
        type Linter struct{}
        func (l *Linter) Next() {}
        func run() { r := store.Open(); r.Next() }
        "#,
        expect![[r#"
            Base.reader -> lint.py:Reader (SameFile, 1.00)
            Linter.run -> lint.py:Base.reader (Receiver, 1.00)
            Linter.run -> lint.py:Reader.next (Receiver, 1.00)
            Linter.run -> lint.py:Base.reader (Receiver, 1.00)
            Linter.run -> lint.py:Reader.next (Receiver, 1.00)
            Linter.reader -> src/Linter.java:Reader (SameFile, 1.00)
            Linter.run -> src/Linter.java:Linter.reader (Local, 1.00)
            Linter.run -> src/Linter.java:Reader.next (Receiver, 1.00)
            Linter.run -> src/Linter.java:Linter.reader (Receiver, 1.00)
            Linter.run -> src/Linter.java:Reader.next (Receiver, 1.00)
            Linter.ReaderAsync -> src/Linter.cs:Reader (SameFile, 1.00)
            Linter.Run -> src/Linter.cs:Linter.ReaderAsync (Local, 1.00)
            Linter.Run -> src/Linter.cs:Reader.Next (Receiver, 1.00)
            run -> store/store.go:Open (Imported, 1.00)
            run -> store/store.go:Reader.Next (Receiver, 1.00)
        "#]],
    );
}

#[test]
fn go_calls_through_a_package_name_stay_in_the_packages_imported() {
    // `template.New()` is the standard library's, not the project's `New`;
    // `fs.Open()` is the imported package's, not the same-named function next to
    // the call. (Go's import does not say which name it binds.)
    check_calls(
        r#"
        //- go.mod
        module example.com/gin
        //- gin.go
        package gin
        type Engine struct{}
        func New() *Engine { return nil }
        //- render/html.go
        package render
        import (
        	"html/template"
        	"example.com/gin/internal/fs"
        )
        func Open() {}
        func load() {
        	template.New("")
        	fs.Open()
        }
        //- internal/fs/fs.go
        package fs
        func Open() {}
        "#,
        expect![[r#"
            load -> internal/fs/fs.go:Open (Imported, 1.00)
        "#]],
    );
}

#[test]
fn cpp_calls_follow_declared_types() {
    // `ok` is defined twice (and declared twice in the header), so by name alone
    // each call is ambiguous; the declared types and `Open`'s return type pick one,
    // and a `std::string` is not ours.
    check_calls(
        r#"
        //- db.h
        class Status { public: bool ok() const; };
        class Builder { public: bool ok() const; };
        class Base { public: Status Open(); };
        class Store : public Base {};
        //- db.cc
        #include "db.h"
        bool Status::ok() const { return true; }
        bool Builder::ok() const { return true; }
        Status Base::Open() { return Status(); }
        void run(Store* store) {
          Status s;
          s.ok();
          auto t = store->Open();
          t.ok();
          std::string x;
          x.ok();
        }
        "#,
        expect![[r#"
            Base::Open -> db.h:Status (Imported, 1.00)
            run -> db.cc:Status::ok (Receiver, 1.00)
            run -> db.cc:Base::Open (Receiver, 1.00)
            run -> db.cc:Status::ok (Receiver, 1.00)
        "#]],
    );
}

#[test]
fn cpp_bare_calls_look_in_the_methods_class_first() {
    // In `Foo::run`, `helper()` and `this->helper()` are `Foo::helper`, and
    // `flush()` the `Base::flush` that `Foo` inherits (as the included header
    // declares it): C++ looks in the class and its bases before the namespace.
    // By name alone each would be `Bar`'s, defined first in the file. A lambda in
    // the method looks in the same class; a free function (in a namespace or not)
    // has no class to look in; `std::flush` is the standard library's.
    check_calls(
        r#"
        //- db.h
        class Base { public: void flush(); };
        class Bar { public: void helper(); void flush(); };
        class Foo : public Base { public: void helper(); void run(); int size(); };
        //- db.cc
        #include "db.h"
        void Bar::helper() {}
        void Bar::flush() {}
        void Foo::helper() {}
        void Foo::run() {
          helper();
          this->helper();
          flush();
          auto n = size();
          Bar::helper();
          [&]() { flush(); }();
          std::flush();
        }
        void free() { helper(); }
        namespace ns {
        void Bar::flush() { helper(); }
        void other() { helper(); }
        }
        //- base.cc
        #include "db.h"
        void Base::flush() {}
        "#,
        expect![[r#"
            Foo::run -> db.cc:Foo::helper (Receiver, 1.00)
            Foo::run -> db.cc:Foo::helper (Receiver, 1.00)
            Foo::run -> db.h:Base::flush (Receiver, 1.00)
            Foo::run -> db.h:Foo::size (Receiver, 1.00)
            Foo::run -> db.cc:Bar::helper (Receiver, 1.00)
            Foo::run -> db.h:Base::flush (Receiver, 1.00)
            ns::Bar::flush -> db.cc:Bar::helper (Receiver, 1.00)
        "#]],
    );
}

#[test]
fn cpp_a_variable_made_by_a_bare_call_in_a_method_has_the_methods_type() {
    // `auto it = open();` in `Table::scan` is `Table::open`'s `Cursor`, so
    // `it->next()` is `Cursor::next`; the free `open()` (a `File*`) is what the
    // same line means in a free function, and in a method of a class without
    // an `open` of its own.
    check_calls(
        r#"
        //- table.h
        struct Cursor { bool next(); };
        struct File { bool next(); };
        class Table { public: Cursor* open(); void scan(); };
        class Log { public: void scan(); };
        //- table.cc
        #include "table.h"
        File* open() { return nullptr; }
        void Table::scan() { auto it = open(); it->next(); }
        void Log::scan() { auto f = open(); f->next(); }
        void dump() { auto f = open(); f->next(); }
        "#,
        expect![[r#"
            Table::scan -> table.h:Table::open (Receiver, 1.00)
            Table::scan -> table.h:Cursor::next (Receiver, 1.00)
            Log::scan -> table.cc:open (SameFile, 1.00)
            Log::scan -> table.h:File::next (Receiver, 1.00)
            dump -> table.cc:open (SameFile, 1.00)
            dump -> table.h:File::next (Receiver, 1.00)
        "#]],
    );
}

#[test]
fn cpp_qualified_calls_follow_their_namespace() {
    // `logx::format(1)` is the `format` of namespace `logx`, not whichever
    // `format` comes first (fmt's) nor the method `formatter::format`; nested
    // scopes count whole (`logx::detail::format`), and a class is reached through
    // its namespace (`logx::Sink::make`, `logx::registry::instance` in lower
    // case). A scope we cannot place (`fl::`, an alias from a header we do not
    // read; fmt's inline `v9` between) is left to the name, but never to a
    // class's method; `std::chrono::now()` is the standard library's.
    check_calls(
        r#"
        //- log.h
        namespace fmt { inline namespace v9 { int format(const char* s) { return 0; } } }
        namespace logx {
        struct formatter { int format(const char* s); };
        int format(int x) { return x; }
        struct Sink { static Sink make(); };
        struct registry { static registry& instance(); };
        namespace detail { int format(long y) { return 2; } int now() { return 3; } }
        }
        //- use.cc
        #include "log.h"
        int use() {
          logx::format(1);
          logx::detail::format(2L);
          logx::Sink::make();
          logx::registry::instance();
          fl::format("a");
          std::chrono::now();
          return 0;
        }
        "#,
        expect![[r#"
            use -> log.h:logx::format (Receiver, 1.00)
            use -> log.h:logx::detail::format (Receiver, 1.00)
            use -> log.h:logx::Sink::make (Receiver, 1.00)
            use -> log.h:logx::registry::instance (Receiver, 1.00)
            use -> log.h:fmt::v9::format (Imported, 0.33)
            use -> log.h:logx::format (Imported, 0.33)
            use -> log.h:logx::detail::format (Imported, 0.33)
        "#]],
    );
}

#[test]
fn cpp_template_calls_are_calls() {
    // A call with explicit template arguments is still a call: unqualified
    // (`make<int>()`), through a namespace (`conv::to<int>`, nested too), and
    // on an object (`r.get<int>()`, `p->get<long>()`), typed like the
    // same call without them.
    check_calls(
        r#"
        //- conv.h
        namespace conv {
        template <typename T> T to(const char* s) { return T(); }
        namespace detail { template <typename T> T parse(const char* s) { return T(); } }
        }
        template <typename T> T make() { return T(); }
        struct Row { template <typename T> T get(int i) const { return T(); } };
        struct Other { template <typename T> T get(int i) const { return T(); } };
        //- use.cc
        #include "conv.h"
        int use(const Row& r, Row* p) {
          make<int>();
          conv::to<int>("1");
          conv::detail::parse<int>("2");
          r.get<int>(0);
          p->get<long>(1);
          return 0;
        }
        "#,
        expect![[r#"
            use -> conv.h:make (Imported, 1.00)
            use -> conv.h:conv::to (Receiver, 1.00)
            use -> conv.h:conv::detail::parse (Receiver, 1.00)
            use -> conv.h:Row::get (Receiver, 1.00)
            use -> conv.h:Row::get (Receiver, 1.00)
        "#]],
    );
}

#[test]
fn member_calls_on_receivers_of_unknown_type_are_guesses() {
    // Issue 24: requests' `os.environ.get(..)` was a sure `imported` edge to
    // `RequestsCookieJar.get` (utils.py imports cookies.py), and flask's
    // `app.config.update(..)` a sure `global` edge to the tutorial's only `update`.
    // A typed receiver, a module of the project and a Rust path keep theirs.
    check_calls(
        r#"
        //- requests/__init__.py
        //- requests/cookies.py
        class RequestsCookieJar:
            def get(self, name):
                return None
        //- requests/utils.py
        import os
        from requests import cookies
        from requests.cookies import RequestsCookieJar

        def get_environ_proxies():
            jar = RequestsCookieJar()
            jar.get("a")
            cookies.RequestsCookieJar()
            return os.environ.get("no_proxy")
        //- examples/flaskr/blog.py
        def update(id):
            return id
        //- src/flask/app.py
        def create_app(app):
            app.config.update(1)
        //- crates/x/src/lib.rs
        mod util;
        fn run() { util::helper(); }
        //- crates/x/src/util.rs
        pub fn helper() {}
        "#,
        expect![[r#"
            get_environ_proxies -> requests/cookies.py:RequestsCookieJar (Imported, 1.00)
            get_environ_proxies -> requests/cookies.py:RequestsCookieJar.get (Receiver, 1.00)
            get_environ_proxies -> requests/cookies.py:RequestsCookieJar (Imported, 1.00)
            get_environ_proxies -> requests/cookies.py:RequestsCookieJar.get (NameOnly, 1.00)
            create_app -> examples/flaskr/blog.py:update (NameOnly, 0.70)
            run -> crates/x/src/util.rs:helper (Imported, 1.00)
        "#]],
    );
}

/// Graphs of nothing (neither built from a project nor decoded) have no edges,
/// rather than failing to decode bytes they never had.
#[test]
fn default_graphs_have_no_edges() {
    let g = Graphs::default();
    assert!(g.symbol_edges().is_empty());
    assert_eq!(g.callers(DefId { file: 0, ord: 0 }).count(), 0);
}
