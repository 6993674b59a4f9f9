//! Extraction tests: one fixture and one expectation per case.
//! Refresh expectations with `UPDATE_EXPECT=1 cargo test -p code-index`.

use expect_test::{Expect, expect};

use super::*;

/// Renders definitions as `kind qualified_name L<line>-<end> [name line] sig: ... doc: ...`.
fn render_defs(a: &FileAnalysis) -> String {
    let mut out = String::new();
    for d in &a.definitions {
        let depth = {
            let mut n = 0;
            let mut p = d.parent;
            while let Some(i) = p {
                n += 1;
                p = a.definitions[i as usize].parent;
            }
            n
        };
        out.push_str(&format!(
            "{}{} {} L{}-{}{} `{}`",
            "  ".repeat(depth),
            d.kind,
            d.qualified_name,
            d.line,
            d.end_line,
            if d.name_line != d.line { format!(" @{}", d.name_line) } else { String::new() },
            d.signature
        ));
        if let Some(doc) = &d.doc {
            out.push_str(&format!(" doc@{}: {doc}", d.doc_line.unwrap_or(0)));
        }
        out.push('\n');
    }
    if a.error_nodes > 0 {
        out.push_str(&format!("error_nodes: {}\n", a.error_nodes));
    }
    out
}

fn check(lang: Language, source: &str, expect: Expect) {
    let a = analyze(lang, source.as_bytes());
    expect.assert_eq(&render_defs(&a));
    // The outline-only analysis finds the same of everything but references.
    let o = analyze_outline(lang, source.as_bytes());
    assert_eq!(o.definitions, a.definitions, "{lang:?}");
    assert_eq!(o.scopes, a.scopes, "{lang:?}");
    assert_eq!(o.imports, a.imports, "{lang:?}");
    assert_eq!((o.package, o.lines, o.error_nodes), (a.package, a.lines, a.error_nodes));
    assert!(o.references.is_empty());
}

fn render_refs(a: &FileAnalysis) -> String {
    a.references
        .iter()
        .map(|r| {
            let enc = r
                .enclosing
                .map(|i| a.definitions[i as usize].qualified_name.as_str())
                .unwrap_or("-");
            let on = r.receiver.as_deref().map(|t| format!(" on {t}")).unwrap_or_default();
            format!("{}:{} {} {}{on} in {enc}\n", r.line, r.column, r.kind.as_str(), r.name)
        })
        .collect()
}

/// The member calls of `source` and the receiver type each was given, if any.
fn check_receivers(lang: Language, source: &str, expect: Expect) {
    let a = analyze(lang, source.as_bytes());
    let s: String = a
        .references
        .iter()
        .filter(|r| r.kind == RefKind::MemberCall)
        .map(|r| format!("{} {}: {}\n", r.line, r.name, r.receiver.as_deref().unwrap_or("?")))
        .collect();
    expect.assert_eq(&s);
}

fn check_refs(lang: Language, source: &str, expect: Expect) {
    let a = analyze(lang, source.as_bytes());
    expect.assert_eq(&render_refs(&a));
}

#[allow(dead_code)]
fn check_imports(lang: Language, source: &str, expect: Expect) {
    let a = analyze(lang, source.as_bytes());
    let s: String =
        a.imports.iter().map(|i| format!("{} {:?} <- {}\n", i.line, i.module, i.text)).collect();
    expect.assert_eq(&s);
}

#[test]
fn every_query_compiles() {
    for lang in Language::ALL {
        let _ = compiled(lang);
    }
}

#[test]
fn python_definitions() {
    check(
        Language::Python,
        r#"
"""Module doc."""
import os
MAX_RETRIES = 3
_private = 1

# Top comment for helper.
def helper(a, b=2):
    """Add things.

    More text.
    """
    def inner():
        return a
    return inner() + b

@dataclass
class Config(Base, metaclass=Meta):
    """Holds config."""
    name: str = "x"

    @property
    def value(self) -> int:
        return self.helper(1)

    async def fetch(self, url):
        pass

    class Nested:
        def deep(self): ...
"#,
        expect![[r#"
            constant MAX_RETRIES L4-4 `MAX_RETRIES = 3`
            function helper L8-15 `def helper(a, b=2):` doc@9: Add things.
              function helper.inner L13-14 `def inner():`
            class Config L17-30 @18 `class Config(Base, metaclass=Meta):` doc@19: Holds config.
              method Config.value L22-24 @23 `def value(self) -> int:`
              method Config.fetch L26-27 `async def fetch(self, url):`
              class Config.Nested L29-30 `class Nested:`
                method Config.Nested.deep L30-30 `def deep(self):`
        "#]],
    );
}

#[test]
fn rust_definitions() {
    check(
        Language::Rust,
        r#"
//! Crate doc.
use std::fmt;

/// A point.
#[derive(Debug)]
pub struct Point<T> {
    x: T,
    y: T,
}

pub enum Shape { Circle(f64), Square { side: f64 } }

pub trait Area {
    /// Computes the area.
    fn area(&self) -> f64;
    fn name(&self) -> &str { "shape" }
}

impl<T: Copy> Point<T> {
    pub fn new(x: T, y: T) -> Self {
        Point { x, y }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "shape")
    }
}

pub const LIMIT: usize = 10;
static NAME: &str = "n";
type Result<T> = std::result::Result<T, Error>;

mod inner {
    pub fn free() {}
}
mod external;

macro_rules! square { ($x:expr) => { $x * $x }; }

union U { a: u32, b: f32 }

extern "C" { fn abs(x: i32) -> i32; }
"#,
        expect![[r#"
            struct Point L6-10 @7 `pub struct Point<T>` doc@5: A point.
            enum Shape L12-12 `pub enum Shape`
            trait Area L14-18 `pub trait Area`
              method Area::area L16-16 `fn area(&self) -> f64;` doc@15: Computes the area.
              method Area::name L17-17 `fn name(&self) -> &str`
            method Point::new L21-23 `pub fn new(x: T, y: T) -> Self`
            method Shape::fmt L27-29 `fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result`
            constant LIMIT L32-32 `pub const LIMIT: usize = 10;`
            constant NAME L33-33 `static NAME: &str = "n";`
            type_alias Result L34-34 `type Result<T> = std::result::Result<T, Error>;`
            module inner L36-38 `mod inner`
              function inner::free L37-37 `pub fn free()`
            module external L39-39 `mod external;`
            macro square L41-41 `macro_rules! square`
            union U L43-43 `union U`
            function abs L45-45 `fn abs(x: i32) -> i32;`
        "#]],
    );
}

#[test]
fn javascript_definitions() {
    check(
        Language::JavaScript,
        r#"
import { a, b as c } from './util.js';
const fs = require('fs');
export const MAX = 5;

/** Adds numbers. */
export function add(x, y) { return x + y; }
function* gen() { yield 1; }
const arrow = (a) => a * 2;
let fexpr = function named() {};

class Animal extends Base {
  #secret = 1;
  handler = () => {};
  constructor(name) { super(); this.name = name; }
  // Speaks.
  speak() { return this.name; }
  static create() { return new Animal('x'); }
  get age() { return 1; }
}

module.exports.util = function () {};
const obj = {
  method() {},
  prop: () => 1,
};
"#,
        expect![[r#"
            constant MAX L4-4 `export const MAX = 5`
            function add L7-7 `export function add(x, y)` doc@6: Adds numbers.
            function gen L8-8 `function* gen()`
            function arrow L9-9 `const arrow = (a) =>`
            function fexpr L10-10 `let fexpr = function named()`
              function fexpr.named L10-10 `function named()`
            class Animal L12-20 `class Animal extends Base`
              method Animal.handler L14-14 `handler = () =>`
              method Animal.constructor L15-15 `constructor(name)`
              method Animal.speak L17-17 `speak()` doc@16: Speaks.
              method Animal.create L18-18 `static create()`
              method Animal.age L19-19 `get age()`
            function util L22-22 `module.exports.util = function ()`
            constant obj L23-26 `const obj =`
              method obj.method L24-24 `method()`
              function obj.prop L25-25 `prop: () =>`
        "#]],
    );
}

#[test]
fn typescript_definitions() {
    check(
        Language::TypeScript,
        r#"
import type { Foo } from "./foo";
export interface Shape {
  area(): number;
  name: string;
}
export type Id = string | number;
enum Color { Red, Green }
declare module "lib" {
  export function f(): void;
}
namespace NS { export const X = 1; }
export abstract class Base<T> implements Shape {
  abstract area(): number;
  private helper = (x: number): number => x;
  name = "base";
  constructor(private readonly id: Id) { super(); }
  public async load(id: Id): Promise<T> { return null as any; }
}
export default function main(): void {}
function overload(a: string): void;
function overload(a: any) {}
"#,
        expect![[r#"
            interface Shape L3-6 `export interface Shape`
              method Shape.area L4-4 `area(): number`
            type_alias Id L7-7 `export type Id = string | number;`
            enum Color L8-8 `enum Color`
            module lib L9-11 `module "lib"`
              function lib.f L10-10 `export function f(): void;`
            namespace NS L12-12 `namespace NS`
            class Base L13-19 `export abstract class Base<T> implements Shape`
              method Base.area L14-14 `abstract area(): number`
              method Base.helper L15-15 `private helper = (x: number): number =>`
              method Base.constructor L17-17 `constructor(private readonly id: Id)`
              method Base.load L18-18 `public async load(id: Id): Promise<T>`
            function main L20-20 `export default function main(): void`
            function overload L21-21 `function overload(a: string): void;`
            function overload L22-22 `function overload(a: any)`
        "#]],
    );
}

#[test]
fn tsx_definitions() {
    check(
        Language::Tsx,
        r#"
import React from "react";
interface Props { title: string }
export const Button = ({ title }: Props) => <button>{title}</button>;
export function App(): JSX.Element {
  return <div><Button title="x" /></div>;
}
"#,
        expect![[r#"
            interface Props L3-3 `interface Props`
            function Button L4-4 `export const Button = ({ title }: Props) =>`
            function App L5-7 `export function App(): JSX.Element`
        "#]],
    );
}

#[test]
fn go_definitions() {
    check(
        Language::Go,
        r#"
package server

import (
	"fmt"
	h "net/http"
)

// MaxConns is the limit.
const MaxConns = 10

const (
	A = iota
	B
)

// Server serves.
type Server struct {
	Addr string
}

type Handler interface {
	Serve(w h.ResponseWriter) error
}

type ID string
type Alias = int

// Start starts the server.
func (s *Server) Start() error {
	return fmt.Errorf("x")
}

func (s Server) Stop() {}

func New[T any](v T) *Server { return &Server{} }
"#,
        expect![[r#"
            constant MaxConns L10-10 `const MaxConns = 10` doc@9: MaxConns is the limit.
            constant A L13-13 `A = iota`
            constant B L14-14 `B`
            struct Server L18-20 `type Server struct` doc@17: Server serves.
            interface Handler L22-24 `type Handler interface`
              method Handler.Serve L23-23 `Serve(w h.ResponseWriter) error`
            type_alias ID L26-26 `type ID string`
            type_alias Alias L27-27 `type Alias = int`
            method Server.Start L30-32 `func (s *Server) Start() error` doc@29: Start starts the server.
            method Server.Stop L34-34 `func (s Server) Stop()`
            function New L36-36 `func New[T any](v T) *Server`
        "#]],
    );
}

#[test]
fn java_definitions() {
    check(
        Language::Java,
        r#"
package com.example;

import java.util.List;
import static java.lang.Math.max;

/**
 * A repository.
 */
public class Repo<T> extends Base implements Store {
    public static final int LIMIT = 5;
    private int count;

    public Repo() { super(); }

    @Override
    public List<T> findAll() {
        return helper(List.of());
    }

    private static class Inner {
        void run() {}
    }

    enum State { ON, OFF; boolean isOn() { return this == ON; } }
}

interface Store {
    int SIZE = 3;
    void save(Object o);
    default void log() {}
}

record Point(int x, int y) {
    Point { if (x < 0) throw new IllegalArgumentException(); }
}

@interface Marker { String value(); }
"#,
        expect![[r#"
            class Repo L10-26 `public class Repo<T> extends Base implements Store` doc@8: A repository.
              constant Repo.LIMIT L11-11 `public static final int LIMIT = 5;`
              method Repo.Repo L14-14 `public Repo()`
              method Repo.findAll L16-19 @17 `@Override public List<T> findAll()`
              class Repo.Inner L21-23 `private static class Inner`
                method Repo.Inner.run L22-22 `void run()`
              enum Repo.State L25-25 `enum State`
                method Repo.State.isOn L25-25 `boolean isOn()`
            interface Store L28-32 `interface Store`
              constant Store.SIZE L29-29 `int SIZE = 3;`
              method Store.save L30-30 `void save(Object o);`
              method Store.log L31-31 `default void log()`
            record Point L34-36 `record Point(int x, int y)`
              method Point.Point L35-35 `Point`
            interface Marker L38-38 `@interface Marker`
              method Marker.value L38-38 `String value();`
        "#]],
    );
}

#[test]
fn csharp_definitions() {
    check(
        Language::CSharp,
        r#"
using System;
using System.Collections.Generic;

namespace Acme.Billing
{
    /// <summary>
    /// Computes invoices.
    /// </summary>
    public class InvoiceService : IService
    {
        public const int MaxLines = 100;
        public string Name { get; set; }
        public event EventHandler Changed;

        public InvoiceService() { }

        public decimal Total(IEnumerable<decimal> lines)
        {
            decimal Sum() => 0;
            return Sum();
        }

        public int this[int i] => i;
        public static InvoiceService operator +(InvoiceService a, InvoiceService b) => a;
        ~InvoiceService() { }
    }

    public interface IService { void Run(); }
    public struct Money { public decimal Amount; }
    public enum Currency { Usd, Eur }
    public record Line(string Sku, decimal Price);
    public delegate void Notify(string message);
}
"#,
        expect![[r#"
            namespace Acme.Billing L5-34 `namespace Acme.Billing`
              class Acme.Billing.InvoiceService L10-27 `public class InvoiceService : IService` doc@8: Computes invoices.
                constant Acme.Billing.InvoiceService.MaxLines L12-12 `public const int MaxLines = 100;`
                property Acme.Billing.InvoiceService.Name L13-13 `public string Name`
                property Acme.Billing.InvoiceService.Changed L14-14 `public event EventHandler Changed;`
                method Acme.Billing.InvoiceService.InvoiceService L16-16 `public InvoiceService()`
                method Acme.Billing.InvoiceService.Total L18-22 `public decimal Total(IEnumerable<decimal> lines)`
                  function Acme.Billing.InvoiceService.Total.Sum L20-20 `decimal Sum()`
                property Acme.Billing.InvoiceService.this L24-24 `public int this[int i] => i;`
                method Acme.Billing.InvoiceService.operator+ L25-25 `public static InvoiceService operator +(InvoiceService a, InvoiceService b)`
                method Acme.Billing.InvoiceService.~InvoiceService L26-26 `~InvoiceService()`
              interface Acme.Billing.IService L29-29 `public interface IService`
                method Acme.Billing.IService.Run L29-29 `void Run();`
              struct Acme.Billing.Money L30-30 `public struct Money`
              enum Acme.Billing.Currency L31-31 `public enum Currency`
              record Acme.Billing.Line L32-32 `public record Line(string Sku, decimal Price);`
              type_alias Acme.Billing.Notify L33-33 `public delegate void Notify(string message);`
        "#]],
    );
}

#[test]
fn csharp_file_scoped_namespace() {
    check(
        Language::CSharp,
        r#"
namespace Acme.Tools;

public static class Ext
{
    public static string Shout(this string s) => s.ToUpper();
}
"#,
        expect![[r#"
            namespace Acme.Tools L2-7 `namespace Acme.Tools;`
              class Acme.Tools.Ext L4-7 `public static class Ext`
                method Acme.Tools.Ext.Shout L6-6 `public static string Shout(this string s)`
        "#]],
    );
}

#[test]
fn c_definitions() {
    check(
        Language::C,
        r#"
#include <stdio.h>
#include "local.h"

#define MAX 10
#define SQUARE(x) ((x) * (x))

/* A node. */
struct node {
    int value;
    struct node *next;
};

typedef struct { int a; } pair_t;
typedef int (*callback_t)(int);
union u { int i; float f; };
enum color { RED, GREEN };

int prototype_only(int x);

// Adds.
static int add(int a, int b) {
    return a + b;
}

char *dup(const char *s) { return 0; }
"#,
        expect![[r#"
            constant MAX L5-5 `#define MAX 10`
            macro SQUARE L6-6 `#define SQUARE(x) ((x) * (x))`
            struct node L9-12 `struct node` doc@8: A node.
            type_alias pair_t L14-14 `typedef struct`
            type_alias callback_t L15-15 `typedef int (*callback_t)(int);`
            union u L16-16 `union u`
            enum color L17-17 `enum color`
            function add L22-24 `static int add(int a, int b)` doc@21: Adds.
            function dup L26-26 `char *dup(const char *s)`
        "#]],
    );
}

#[test]
fn cpp_definitions() {
    check(
        Language::Cpp,
        r#"
#include <vector>

namespace geo {

/// A shape.
class Shape {
public:
    Shape();
    virtual ~Shape();
    virtual double area() const = 0;
    int id() const { return id_; }
    bool operator==(const Shape& o) const;
private:
    int id_;
};

struct Point { double x, y; };

template <typename T>
T max_of(T a, T b) { return a > b ? a : b; }

double Shape::area() const { return 0; }
Shape::Shape() {}

using Points = std::vector<Point>;

namespace detail { void helper() {} }

}  // namespace geo

int main() { geo::detail::helper(); return 0; }
"#,
        expect![[r#"
            namespace geo L4-30 `namespace geo`
              class geo::Shape L7-16 `class Shape` doc@6: A shape.
                method geo::Shape::Shape L9-9 `Shape();`
                method geo::Shape::~Shape L10-10 `virtual ~Shape();`
                method geo::Shape::area L11-11 `virtual double area() const = 0;`
                method geo::Shape::id L12-12 `int id() const`
                method geo::Shape::operator== L13-13 `bool operator==(const Shape& o) const;`
              struct geo::Point L18-18 `struct Point`
              function geo::max_of L20-21 @21 `template <typename T> T max_of(T a, T b)`
              method geo::Shape::area L23-23 `double Shape::area() const`
              method geo::Shape::Shape L24-24 `Shape::Shape()`
              type_alias geo::Points L26-26 `using Points = std::vector<Point>;`
              namespace geo::detail L28-28 `namespace detail`
                function geo::detail::helper L28-28 `void helper()`
            function main L32-32 `int main()`
        "#]],
    );
}

#[test]
fn python_references_with_enclosing_definition() {
    check_refs(
        Language::Python,
        r#"
class A(Base):
    def run(self, x: Item):
        helper(x)
        self.save()
        return Item(x)

def helper(v):
    return v
"#,
        expect![[r#"
            2:9 type Base in A
            3:19 use x in A.run
            3:22 type Item in A.run
            4:9 call helper in A.run
            4:16 use x in A.run
            5:14 self_call save in A.run
            6:16 call Item in A.run
            6:21 use x in A.run
            8:12 use v in helper
            9:12 use v in helper
        "#]],
    );
}

#[test]
fn rust_references() {
    check_refs(
        Language::Rust,
        r#"
fn main() {
    let p = Point::new(1, 2);
    p.draw(&Canvas { w: 1 });
    println!("{}", area(p));
}
"#,
        expect![[r#"
            3:9 use p in main
            3:13 use Point in main
            3:20 member_call new on Point in main
            4:5 use p in main
            4:7 member_call draw on Point in main
            4:13 call Canvas in main
            4:22 use w in main
            5:5 call println in main
            5:20 use area in main
            5:25 use p in main
        "#]],
    );
}

#[test]
fn imports_as_written() {
    let cases: &[(Language, &str)] = &[
        (
            Language::Python,
            "import os.path\nimport numpy as np\nfrom . import sibling\nfrom ..pkg.mod import a, b as c\n",
        ),
        (
            Language::Rust,
            "use std::collections::{HashMap, HashSet};\nuse crate::a::b as c;\nmod child;\nextern crate serde;\n",
        ),
        (
            Language::JavaScript,
            "import x from './x.js';\nimport {y} from \"lib\";\nconst z = require('z');\nexport * from './re';\nconst m = import('./lazy');\n",
        ),
        (Language::TypeScript, "import type { T } from '@/types';\nimport * as ns from '../ns';\n"),
        (Language::Go, "import (\n\t\"fmt\"\n\th \"net/http\"\n)\n"),
        (Language::Java, "package a.b;\nimport java.util.List;\nimport static java.lang.Math.*;\n"),
        (Language::CSharp, "using System;\nusing IO = System.IO;\nusing static System.Math;\n"),
        (Language::C, "#include <stdio.h>\n#include \"util/str.h\"\n"),
        (Language::Cpp, "#include <vector>\n#include \"a.hpp\"\nusing std::string;\n"),
    ];
    let mut out = String::new();
    for (lang, src) in cases {
        let a = analyze(*lang, src.as_bytes());
        out.push_str(&format!("{lang}:\n"));
        for i in &a.imports {
            out.push_str(&format!("  {} {:?} <- {}\n", i.line, i.module, i.text));
        }
        if let Some(p) = &a.package {
            out.push_str(&format!("  package {p}\n"));
        }
    }
    expect![[r#"
        python:
          1 "os.path" <- import os.path
          2 "numpy" <- import numpy as np
          3 "." <- from . import sibling
          4 "..pkg.mod" <- from ..pkg.mod import a, b as c
        rust:
          1 "std::collections::{HashMap, HashSet}" <- use std::collections::{HashMap, HashSet};
          2 "crate::a::b as c" <- use crate::a::b as c;
          3 "child" <- mod child;
          4 "serde" <- extern crate serde;
        javascript:
          1 "./x.js" <- import x from './x.js';
          2 "lib" <- import {y} from "lib";
          3 "z" <- require('z')
          4 "./re" <- export * from './re';
          5 "./lazy" <- import('./lazy')
        typescript:
          1 "@/types" <- import type { T } from '@/types';
          2 "../ns" <- import * as ns from '../ns';
        go:
          2 "fmt" <- "fmt"
          3 "net/http" <- h "net/http"
        java:
          2 "java.util.List" <- import java.util.List;
          3 "java.lang.Math" <- import static java.lang.Math.*;
          package a.b
        csharp:
          1 "System" <- using System;
          2 "System.IO" <- using IO = System.IO;
          3 "System.Math" <- using static System.Math;
        c:
          1 "stdio.h" <- #include <stdio.h>
          2 "util/str.h" <- #include "util/str.h"
        cpp:
          1 "vector" <- #include <vector>
          2 "a.hpp" <- #include "a.hpp"
          3 "std::string" <- using std::string;
    "#]]
    .assert_eq(&out);
}

#[test]
fn syntax_errors_keep_what_parses() {
    check(
        Language::Python,
        "def good():\n    return 1\n\ndef broken(:\n    pass\n\nclass After:\n    def m(self): pass\n",
        expect![[r#"
            function good L1-2 `def good():`
            function broken L4-5 `def broken(:`
            class After L7-8 `class After:`
              method After.m L8-8 `def m(self):`
            error_nodes: 1
        "#]],
    );
}

#[test]
fn invalid_utf8_is_read_lossily_with_true_offsets() {
    // Latin-1 "café" in a comment, then a definition.
    let src = b"# caf\xe9\ndef f():\n    pass\n";
    let a = analyze(Language::Python, src);
    assert_eq!(a.definitions.len(), 1);
    let d = &a.definitions[0];
    assert_eq!((d.name.as_str(), d.line), ("f", 2));
    assert_eq!(&src[d.start_byte as usize..d.start_byte as usize + 3], b"def");
}

#[test]
fn empty_file() {
    let a = analyze(Language::Rust, b"");
    assert_eq!(a, FileAnalysis::default());
}

#[test]
fn cpp_export_macros_annotations_and_qualified_declarators() {
    check(
        Language::Cpp,
        r#"
namespace leveldb {
class LEVELDB_EXPORT Cache {
 public:
  void Lock() EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  int count_ GUARDED_BY(mu_);
  virtual ~Cache();
};
struct DBImpl::CompactionState { int n; };
LRUHandle** FindPointer(const Slice& key) { return nullptr; }
template <typename Key, class Comparator>
inline SkipList<Key, Comparator>::Iterator::Iterator(const SkipList* list) { list_ = list; }
Env* Env::Default() { return nullptr; }
typedef Iterator* (*BlockFunction)(void*, const ReadOptions&);
int Compare(int a) {
  if (a) CHECK_OK(a);
  return FOO_BAR(a);
}
SPDLOG_INLINE std::shared_ptr<logger> get(const std::string &name) { return nullptr; }
template <typename T> FMT_CONSTEXPR FMT_INLINE auto parse(T x) -> T { return x; }
SPDLOG_INLINE registry &registry::instance() { static registry r; return r; }
LARGE_INTEGER Frequency() { return f; }
}
"#,
        expect![[r#"
            namespace leveldb L2-23 `namespace leveldb`
              class leveldb::Cache L3-8 `class LEVELDB_EXPORT Cache`
                method leveldb::Cache::Lock L5-5 `void Lock() EXCLUSIVE_LOCK_FUNCTION()`
                method leveldb::Cache::~Cache L7-7 `virtual ~Cache();`
              struct leveldb::DBImpl::CompactionState L9-9 `struct DBImpl::CompactionState`
              function leveldb::FindPointer L10-10 `LRUHandle** FindPointer(const Slice& key)`
              method leveldb::SkipList::Iterator::Iterator L11-12 @12 `template <typename Key, class Comparator> inline SkipList<Key, Comparator>::Iterator::Iterator(const SkipList* list)`
              method leveldb::Env::Default L13-13 `Env* Env::Default()`
              type_alias leveldb::BlockFunction L14-14 `typedef Iterator* (*BlockFunction)(void*, const ReadOptions&);`
              function leveldb::Compare L15-18 `int Compare(int a)`
              function leveldb::get L19-19 `std::shared_ptr<logger> get(const std::string &name)`
              function leveldb::parse L20-20 `template <typename T> FMT_CONSTEXPR FMT_INLINE auto parse(T x) -> T`
              method leveldb::registry::instance L21-21 `registry &registry::instance()`
              function leveldb::Frequency L22-22 `LARGE_INTEGER Frequency()`
        "#]],
    );
}

#[test]
fn js_prototype_methods_ts_construct_signatures_java_enum_bodies() {
    check(
        Language::JavaScript,
        "function Hash(e) {}\nHash.prototype.clear = hashClear;\nHash.prototype.get = function(k) { return 1; };\n",
        expect![[r#"
            function Hash L1-1 `function Hash(e)`
            method Hash.clear L2-2 `Hash.prototype.clear = hashClear`
            method Hash.get L3-3 `Hash.prototype.get = function(k)`
        "#]],
    );
    check(
        Language::TypeScript,
        "interface Ctor {\n  new (x: number): Ctor;\n}\n",
        expect![[r#"
        interface Ctor L1-3 `interface Ctor`
          method Ctor.new L2-2 `new (x: number): Ctor`
    "#]],
    );
    check(
        Language::Java,
        "enum Policy {\n  DEFAULT {\n    int f() { return 1; }\n  },\n  PLAIN;\n}\n",
        expect![[r#"
            enum Policy L1-6 `enum Policy`
              constant Policy.DEFAULT L2-4 `DEFAULT`
                method Policy.DEFAULT.f L3-3 `int f()`
        "#]],
    );
}

#[test]
fn mask_macros_blanks_only_macros_and_keeps_offsets() {
    let src = b"class LEVELDB_EXPORT Cache {\n  void Lock() EXCLUSIVE_LOCK_FUNCTION() { }\n  int count_ GUARDED_BY(mu_);\n};\nclass FOO final {};\nreturn FOO_BAR(x);\n  SPDLOG_API std::string name(int x);\nLARGE_INTEGER f(int x);\n";
    let masked = mask::mask_macros(src);
    assert_eq!(masked.len(), src.len());
    expect![[r#"
        class                Cache {
          void Lock()                           { }
          int count_                ;
        };
        class FOO final {};
        return FOO_BAR(x);
                     std::string name(int x);
        LARGE_INTEGER f(int x);
    "#]]
    .assert_eq(&String::from_utf8_lossy(&masked));
}

#[test]
fn reference_patterns_that_are_chains_go_to_the_walk() {
    let render = |line: &str| match parse_chain(line) {
        None => "query".to_owned(),
        Some(ParsedChain { leaf, kind, steps }) => {
            let up: Vec<String> = steps
                .iter()
                .map(|(field, parent)| {
                    format!("{}{parent}", field.map_or(String::new(), |f| format!("{f}: in ")))
                })
                .collect();
            format!("{leaf} {} <- {}", kind.as_str(), up.join(" <- "))
        }
    };
    let table = [
        ("(identifier) @reference.use", "identifier use <- "),
        ("(call function: (identifier) @reference.call)", "identifier call <- function: in call"),
        (
            "(call function: (attribute attribute: (identifier) @reference.call))",
            "identifier call <- attribute: in attribute <- function: in call",
        ),
        ("(decorator (identifier) @reference.call)", "identifier call <- decorator"),
        ("  (type (identifier) @reference.type)  ; trailing comment", "identifier type <- type"),
        // Everything else stays with the query engine.
        ("(method_reference (identifier) @reference.call .)", "query"),
        ("(call function: (_) @reference.call)", "query"),
        ("(call function: [(identifier) (attribute)] @reference.call)", "query"),
        ("(call function: (identifier) @name) @reference.call", "query"),
        ("(call (identifier) (identifier) @reference.call)", "query"),
        ("(function_definition name: (identifier) @name) @definition.function", "query"),
        ("(call function: (identifier) @reference.nonsense)", "query"),
        ("((identifier) @reference.use (#eq? @reference.use \"self\"))", "query"),
        ("; (identifier) @reference.use", "query"),
    ];
    for (line, want) in table {
        assert_eq!(render(line), want, "{line}");
    }
    assert_eq!(
        paren_balance(
            "(module (expression_statement (assignment left: (identifier) @name) @definition.constant)"
        ),
        1
    );
    assert_eq!(paren_balance(r#"  (#match? @name "^(a|b)\")$"))"#), -1);
}

#[test]
fn calls_are_bare_on_a_receiver_or_on_self() {
    // (language, source, the kind of the reference to `m`)
    let cases = [
        (Language::Python, "def f(o):\n    m()\n", "call"),
        (Language::Python, "def f(o):\n    o.m()\n", "member_call"),
        (Language::Python, "class A:\n    def f(self):\n        self.m()\n", "self_call"),
        (
            Language::Python,
            "class A:\n    @classmethod\n    def f(cls):\n        cls.m()\n",
            "self_call",
        ),
        (Language::JavaScript, "class A { f() { this.m(); } }", "self_call"),
        (Language::JavaScript, "function f(o) { o.m(); }", "member_call"),
        (Language::TypeScript, "class A { f(): void { this.m(); } }", "self_call"),
        (Language::Rust, "impl A { fn f(&self) { self.m(); } }", "self_call"),
        (Language::Rust, "impl A { fn f() { Self::m(); } }", "self_call"),
        (Language::Rust, "fn f() { a::m(); }", "member_call"),
        (Language::Go, "package p\nfunc f() { x.m() }", "member_call"),
        (Language::Java, "class A { void f() { this.m(); } }", "self_call"),
        (Language::Java, "class A { void f() { m(); } }", "call"),
        (Language::Java, "class A { void f(B o) { o.m(); } }", "member_call"),
        (Language::Java, "class A { void f(B o) { o.g().m(); } }", "member_call"),
        (Language::CSharp, "class A { void F() { this.m(); } }", "self_call"),
        (Language::Cpp, "void f() { this->m(); }", "self_call"),
    ];
    for (lang, source, want) in cases {
        let a = analyze(lang, source.as_bytes());
        let kinds: Vec<&str> =
            a.references.iter().filter(|r| r.name == "m").map(|r| r.kind.as_str()).collect();
        assert_eq!(kinds, [want], "{lang:?}: {source}");
    }
}

#[test]
fn python_receiver_types() {
    check_receivers(
        Language::Python,
        r#"
import mod
LOG = mod.getLogger()

class Runner:
    reporter: "Reporter"

    def __init__(self):
        self.linter = Linter()
        self.cache = {}

    def run(self, linter: Linter, out: Optional["io.Writer"] = None, *, n: int | None = None):
        linter.check()
        out.write()
        n.bit_length()
        self.linter.check()
        self.reporter.emit()
        self.cache.get()
        task = mod.Task(1)
        task.start()
        data = load()
        data.keys()
        both = Left()
        both = Right()
        both.go()
        later = Foo()
        later = make()
        later.go()
        Factory.make().build()
        mod.Helper.make()
        LOG.info()
        made = self.Factory()
        made.go()
        reader = linter.reader()
        reader.next()
        self.reader().next()
        x = x.step()
        x.go()

        def inner(linter):
            linter.check()

    @classmethod
    def create(cls):
        made = cls(1)
        made.start()
        other = type(self)()
        other.stop()
        again = self.__class__()
        again.stop()
"#,
        expect![[r#"
            3 getLogger: mod
            13 check: Linter
            14 write: Writer
            15 bit_length: int
            16 check: Linter
            17 emit: Reporter
            18 get: ?
            19 Task: mod
            20 start: Task
            22 keys: load()
            25 go: ?
            28 go: ?
            29 make: Factory
            29 build: Factory.make()
            30 make: Helper
            31 info: mod.getLogger()
            33 go: ?
            34 reader: Linter
            35 next: Linter.reader()
            36 next: Runner.reader()
            37 step: ?
            38 go: ?
            41 check: ?
            46 start: Runner
            48 stop: Runner
            50 stop: Runner
        "#]],
    );
}

#[test]
fn cpp_receiver_types() {
    check_receivers(
        Language::Cpp,
        r#"
class Linter : public Base {
 public:
  Status Check(const Options& options, Reporter* r) {
    store_.Flush();
    this->store_.Flush();
    r->Report();
    options.Validate();
    Store s;
    s.Flush();
    Store* p = new Store();
    p->Flush();
    auto q = std::make_unique<Store>();
    q->Flush();
    auto w = store_.Writer();
    w.Write();
    std::string name;
    name.size();
    std::swap(name, name);
    for (auto& rule : rules_) { rule.Apply(); }
    for (const Rule& r2 : rules_) { r2.Apply(); }
    Store::Open();
    auto o = Store::Open();
    o.Flush();
    return Status::OK();
  }
 private:
  Store store_;
};

void Linter::Run(Store* db) {
  db->Flush();
  store_.Flush();
  this->Helper().Go();
  log::flush();
  db::impl::open();
  std::chrono::now();
  ::util::go();
  leveldb::Status::OK();
  db::impl::open<Options>();
  db->Get<int>(1);
}
"#,
        expect![[r#"
            5 Flush: Store
            6 Flush: Store
            7 Report: Reporter
            8 Validate: Options
            10 Flush: Store
            12 Flush: Store
            13 make_unique: std
            14 Flush: Store
            15 Writer: Store
            16 Write: Store.Writer()
            18 size: string
            19 swap: std
            20 Apply: ?
            21 Apply: Rule
            22 Open: Store
            23 Open: Store
            24 Flush: Store.Open()
            25 OK: Status
            32 Flush: Store
            33 Flush: Store
            34 Go: Linter.Helper()
            35 flush: log::
            36 open: db::impl::
            37 now: std::chrono::
            38 go: util::
            39 OK: Status
            40 open: db::impl::
            41 Get: Store
        "#]],
    );
}

#[test]
fn fields_of_classes_the_file_defines() {
    // `l.store.Flush()`: the field's type, as the class (or struct) body this file
    // defines declares it; a class defined twice is not looked into.
    check_receivers(
        Language::Go,
        r#"
package lint

type Linter struct {
	store  *Store
	a, b   Reader
}

func run(l *Linter, o Other) {
	l.store.Flush()
	l.b.Read()
	o.store.Flush()
	o.Writer.Status()
}
"#,
        expect![[r#"
            10 Flush: Store
            11 Read: Reader
            12 Flush: ?
            13 Status: ?
        "#]],
    );
    check_receivers(
        Language::Python,
        r#"
class Linter:
    def __init__(self):
        self.reporter = Reporter()

class Runner:
    linter: Linter

    def run(self, other: Linter):
        self.linter.reporter.emit()
        other.reporter.emit()
        other.missing.emit()
"#,
        expect![[r#"
            10 emit: Reporter
            11 emit: Reporter
            12 emit: ?
        "#]],
    );
    check_receivers(
        Language::Java,
        r#"
class Store { Writer writer; }
class Twice {}
class Twice {}
class Linter {
    void run(Store s, Twice t) {
        s.writer.flush();
        t.writer.flush();
    }
}
"#,
        expect![[r#"
            7 flush: Writer
            8 flush: ?
        "#]],
    );
    check_receivers(
        Language::Rust,
        r#"
pub struct Store {
    cache: Box<Cache>,
    pub(crate) log: Log,
}
impl<T> Flush for Store<T> {
    fn run(&self) {
        self.cache.get();
        self.log.append();
        self.reader().next();
    }
}
"#,
        expect![[r#"
            8 get: Cache
            9 append: Log
            10 next: Store.reader()
        "#]],
    );
}

#[test]
fn long_call_chains_are_typed_only_so_far() {
    // A receiver that is a chain of calls is typed up to four calls long; a
    // generated chain of thousands neither takes quadratic time nor overflows the
    // stack.
    let mut source = String::from("class A:\n    def run(self, r: Reader):\n        r");
    source.push_str(&".step()".repeat(6));
    check_receivers(
        Language::Python,
        &source,
        expect![[r#"
            3 step: Reader
            3 step: Reader.step()
            3 step: Reader.step().step()
            3 step: Reader.step().step().step()
            3 step: Reader.step().step().step().step()
            3 step: ?
        "#]],
    );
    let mut source = String::from("def run(r: Reader):\n    r");
    source.push_str(&".step()".repeat(20_000));
    let a = analyze(Language::Python, source.as_bytes());
    let typed = a.references.iter().filter(|r| r.receiver.is_some()).count();
    assert_eq!(typed, 5);
}

#[test]
fn typescript_and_rust_receiver_types() {
    check_receivers(
        Language::TypeScript,
        r#"
class Runner {
  reporter: Reporter;
  cache = new Map();
  run(linter: Linter, opt?: Options | undefined) {
    const task = new Task();
    let other: Other = make();
    linter.check();
    opt.get();
    task.start();
    other.go();
    this.reporter.emit();
    this.cache.get();
    Object.keys(opt);
    console.log(opt);
    const w = linter.writer();
    w.write();
    this.make().go();
  }
}
const f = (w: Writer) => w.write();
"#,
        expect![[r#"
            8 check: Linter
            9 get: Options
            10 start: Task
            11 go: Other
            12 emit: Reporter
            13 get: Map
            14 keys: Object
            15 log: console
            16 writer: Linter
            17 write: Linter.writer()
            18 go: Runner.make()
            21 write: Writer
        "#]],
    );
    check_receivers(
        Language::Rust,
        r#"
fn run(l: &mut Linter, o: Option<Opts>, b: Box<dyn Sink>) {
    let x = Foo::new();
    let mut y: Bar = make();
    let z = Baz { a: 1 };
    let w = crate::m::Widget::default();
    let v = make();
    l.check();
    o.unwrap();
    b.send();
    x.go();
    y.go();
    z.go();
    w.go();
    v.go();
    Foo::new();
    crate::m::Widget::new();
    std::fs::read();
    let r = l.reader()?;
    r.next();
}
"#,
        expect![[r#"
            3 new: Foo
            6 default: Widget
            8 check: Linter
            9 unwrap: Option
            10 send: Sink
            11 go: Foo
            12 go: Bar
            13 go: Baz
            14 go: Widget
            15 go: make()
            16 new: Foo
            17 new: Widget
            18 read: std::fs::
            19 reader: Linter
            20 next: Linter.reader()?
        "#]],
    );
}

/// Guards [`crate::store::EXTRACTOR_REVISION`]: an index keeps each file's
/// extraction until the extractor version changes, so a change to extraction that
/// forgets the bump leaves every existing index silently stale (it happened once:
/// two commits changed receivers without it, and benchmarks ran on old output).
///
/// `tests/fingerprint/` holds one sample file per language, and `RECORD` the
/// extractor version indexes compare (a hash of the revision and the query files),
/// a hash of the samples, and one of everything extracted from them. Extraction
/// output that changes while neither the extractor version nor the samples changed
/// fails here. After a bump, `UPDATE_EXPECT=1` re-records; it refuses to re-record
/// a change without one.
#[test]
fn extraction_changes_bump_the_revision() {
    use std::path::Path;

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fingerprint");
    let mut samples: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| Language::from_path(p).is_some())
        .collect();
    samples.sort();
    let covered: std::collections::HashSet<Language> =
        samples.iter().filter_map(|p| Language::from_path(p)).collect();
    assert_eq!(covered.len(), Language::ALL.len(), "a sample per language in {}", dir.display());

    let (mut inputs, mut output) = (stdx::ContentHasher::new(), stdx::ContentHasher::new());
    for path in &samples {
        let source = std::fs::read(path).unwrap();
        inputs.update(path.file_name().unwrap().to_string_lossy().as_bytes());
        inputs.update(&source);
        let a = analyze(Language::from_path(path).unwrap(), &source);
        assert_eq!(a.error_nodes, 0, "{} should parse cleanly", path.display());
        output.update(path.file_name().unwrap().to_string_lossy().as_bytes());
        // Every field (definitions, scopes, references with receivers, imports,
        // package) is in the Debug form, and none is a hash map.
        output.update(format!("{a:?}").as_bytes());
    }
    // What indexes compare: the revision and the query files, hashed.
    let now = format!(
        "extractor {}\nsamples {}\noutput {}\n",
        crate::indexer::extractor_version(),
        &inputs.finish_hex()[..16],
        &output.finish_hex()[..16]
    );

    let record_path = dir.join("RECORD");
    let recorded = std::fs::read_to_string(&record_path).unwrap_or_default();
    if recorded == now {
        return;
    }
    let field = |text: &str, key: &str| {
        text.lines().find_map(|l| l.strip_prefix(key)).map(|v| v.trim().to_owned())
    };
    // A new extractor version (a bump, or new queries), or a new sample, explains
    // new output by itself.
    let explained =
        ["extractor ", "samples "].iter().any(|key| field(&recorded, key) != field(&now, key));
    assert!(
        explained,
        "extraction output changed, but EXTRACTOR_REVISION and the query files did not: \
         existing indexes would keep the old output. Bump EXTRACTOR_REVISION in \
         store.rs, then re-record with UPDATE_EXPECT=1.\nrecorded:\n{recorded}now:\n{now}"
    );
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&record_path, &now).unwrap();
    } else {
        panic!(
            "the extractor version moved; re-record {} with UPDATE_EXPECT=1\n\
             recorded:\n{recorded}now:\n{now}",
            record_path.display()
        );
    }
}

#[test]
fn java_csharp_and_go_receiver_types() {
    check_receivers(
        Language::Java,
        r#"
class Linter extends Base {
    private final Store store;
    private Cache a, b = new Cache();
    Linter(Store store) { this.store = store; }
    int check(List<String> files, Reporter r) {
        store.flush();
        this.store.flush();
        r.report();
        for (Rule rule : rules) { rule.apply(); }
        var l = new Linter(null);
        l.check(null, null);
        Linter k = make();
        k.check(null, null);
        new Linter(null).check(null, null);
        Store.open();
        files.forEach(f -> f.trim());
        b.get();
        a.get();
        Runnable run = () -> { Store store = null; store.close(); };
        var w = store.writer();
        w.write();
        var m = make();
        m.check(null, null);
        store.writer().write();
        return 0;
    }
}
"#,
        expect![[r#"
            7 flush: Store
            8 flush: Store
            9 report: Reporter
            10 apply: Rule
            12 check: Linter
            14 check: Linter
            15 check: Linter
            16 open: Store
            17 forEach: List
            17 trim: ?
            18 get: Cache
            19 get: Cache
            20 close: Store
            21 writer: Store
            22 write: Store.writer()
            24 check: Linter.make()
            25 writer: Store
            25 write: Store.writer()
        "#]],
    );
    check_receivers(
        Language::CSharp,
        r#"
class Linter : Base {
    private readonly Store store;
    public Reporter Reporter { get; set; }
    int Check(List<string> files, Rule rule) {
        store.Flush();
        this.store.Flush();
        Reporter.Report();
        rule.Apply();
        var l = new Linter();
        l.Check(null, null);
        foreach (Rule r in rules) { r.Apply(); }
        foreach (var v in rules) { v.Apply(); }
        Store.Open();
        Current.Check(null, null);
        var w = store.Writer();
        w.Write();
        var m = Make<int>();
        m.Check(null, null);
        var t = await store.OpenAsync();
        t.Read();
        return 0;
    }
    Linter Current { get; }
}
"#,
        expect![[r#"
            6 Flush: Store
            7 Flush: Store
            8 Report: Reporter
            9 Apply: Rule
            11 Check: Linter
            12 Apply: Rule
            13 Apply: ?
            14 Open: Store
            15 Check: Linter
            16 Writer: Store
            17 Write: Store.Writer()
            19 Check: Linter.Make()
            20 OpenAsync: Store
            21 Read: Store.OpenAsync()?
        "#]],
    );
    check_receivers(
        Language::Go,
        r#"
package lint

import "example.com/m/config"

func (l *Linter) Check(files []string, r Reporter) int {
	l.count()
	r.Report()
	x := NewLinter()
	x.count()
	y, err := Open("db")
	y.Close()
	err.Error()
	var s store.Store
	s.Flush()
	p := &Linter{}
	p.count()
	for _, f := range files {
		f.Close()
	}
	l.store.Flush()
	c := config.Load()
	c.Apply()
	w := l.Writer()
	w.Write()
	switch v := r.(type) {
	case Checker:
		v.Check()
	}
	undeclared.Call()
	return 0
}
"#,
        expect![[r#"
            7 count: Linter
            8 Report: Reporter
            10 count: NewLinter()
            12 Close: Open()
            13 Error: ?
            15 Flush: Store
            17 count: Linter
            19 Close: ?
            21 Flush: ?
            22 Load: config
            23 Apply: config.Load()
            24 Writer: Linter
            25 Write: Linter.Writer()
            28 Check: ?
            30 Call: ?
        "#]],
    );
}

/// Python with long runs of comment lines: above definitions (doc comments), at a
/// block's indentation after its last statement, dedented after a block, and mixed.
const PYTHON_COMMENT_RUNS: &str = "\
import os

# Summary of f.
# more
# more
# more
# more
# more
# more
# more
# more
def f():
    x = 1
    # trailing, in f
    # trailing, in f
    # trailing, in f
    # trailing, in f
    # trailing, in f
    # trailing, in f
    # trailing, in f
    # trailing, in f
    # trailing, in f
# dedented after f
# dedented after f
# dedented after f
# dedented after f
# dedented after f
# dedented after f
# dedented after f
# dedented after f
# dedented after f

class C:
    def m(self):
        return 1
    #
    #
    #
    #
    #
    #
    #
    #
    # Summary of n, after empty comment lines.
    def n(self):
        return 2
        # deeper
        # deeper
        # deeper
        # deeper
        # deeper
        # deeper
        # deeper
        # deeper
    # class level again
    # class level again
    # class level again
    # class level again
    # class level again
    # class level again
    # class level again
    # class level again
    def o(self):
        pass
";

#[test]
fn python_comment_runs_parse_in_linear_time_and_extract_the_same() {
    // Issue 24: 16,000 `#` lines took 15 s to index (tree-sitter-python's scanner
    // reads ahead over every following comment line at each line end). The masked
    // parse must extract exactly what the full parse does…
    let masked = analyze(Language::Python, PYTHON_COMMENT_RUNS.as_bytes());
    let full = analyze_masked(Language::Python, PYTHON_COMMENT_RUNS.as_bytes(), false);
    assert_eq!(render_defs(&masked), render_defs(&full));
    assert_eq!(render_refs(&masked), render_refs(&full));
    expect![[r#"
        function f L12-22 `def f():` doc@3: Summary of f.
        class C L33-64 `class C:`
          method C.m L34-35 `def m(self):`
          method C.n L45-54 `def n(self):` doc@44: Summary of n, after empty comment lines.
          method C.o L63-64 `def o(self):` doc@55: class level again
    "#]]
    .assert_eq(&render_defs(&masked));
    // …and a long run must not cost its length squared: 20,000 lines took seconds
    // (minutes unoptimized) before.
    let long = format!("def f():\n    return 1\n{}", "# hello world\n".repeat(20_000));
    let started = std::time::Instant::now();
    let a = analyze(Language::Python, long.as_bytes());
    assert_eq!(a.definitions.len(), 1);
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
}

const PYTHON_ALTERNATING_COMMENTS: &str = "\
class C:
    def m(self):
        x = 1
        # m 1
    # C 1
        # m 2
    # C 2

        # m 3
    # C 3
        # m 4
    # C 4
        # m 5
# top 1
        # m 6
# top 2
    # C 5
# top 3
def f():
    return 1
    # f 1
# top 4
    # f 2
# top 5
    # f 3
# top 6
    # f 4
# top 7
    # f 5
# top 8
    # f 6
    return 2
";

#[test]
fn python_comment_runs_at_alternating_indentations_are_masked_and_extract_the_same() {
    // Issue 32: comment lines at two indentations in turn were no run at one
    // indentation, so nothing was masked and the scanner's reading ahead stayed
    // quadratic (2,000 lines 321 ms, 8,000 2.2 s). A run is now every comment line
    // up to the next code, blank lines inside it too; what stays for the parser is
    // where blocks can close: the first line, each line indented less than all
    // above it and the line before it, and the last.
    let masked = mask::mask_comment_runs(PYTHON_ALTERNATING_COMMENTS.as_bytes());
    let masked = String::from_utf8_lossy(&masked);
    let kept: Vec<&str> = masked.lines().filter_map(|l| l.trim().strip_prefix("# ")).collect();
    expect![[r#"
        [
            "m 1",
            "C 1",
            "m 5",
            "top 1",
            "top 3",
            "f 1",
            "top 4",
            "f 6",
        ]
    "#]]
    .assert_debug_eq(&kept);
    let a = analyze(Language::Python, PYTHON_ALTERNATING_COMMENTS.as_bytes());
    let full = analyze_masked(Language::Python, PYTHON_ALTERNATING_COMMENTS.as_bytes(), false);
    assert_eq!(render_defs(&a), render_defs(&full));
    assert_eq!(render_refs(&a), render_refs(&full));
    expect![[r#"
        class C L1-13 `class C:`
          method C.m L2-4 `def m(self):`
        function f L19-32 `def f():` doc@18: top 3
    "#]]
    .assert_eq(&render_defs(&a));
}

#[test]
fn cpp_template_specializations_and_operators_are_definitions() {
    // Issue 24: against ctags on pybind11's headers, partial and explicit
    // specializations (`struct type_caster<std::vector<T>>`) and operators,
    // conversion operators included, were missed.
    check(
        Language::Cpp,
        r#"
namespace pybind11 {
template <typename T, typename SFINAE = void> struct type_caster { };
template <typename Type, typename Alloc>
struct type_caster<std::vector<Type, Alloc>> : list_caster<std::vector<Type, Alloc>, Type> {};
template <> class type_caster<bool> {
public:
    bool load(handle src, bool) { return true; }
};
template <typename... Args> struct process_attributes;
template <> struct process_attribute<name> : process_attribute_default<name> {
    static void init(const name &n, function_record *r) { r->name = n.value; }
};
class str {
public:
    operator std::string() const { return {}; }
    explicit operator std::string_view() const { return {}; }
    operator bool() const noexcept { return true; }
    str &operator+=(const str &o);
    friend str operator+(const str &a, const str &b) { return a; }
    bool operator()(int x) const { return x; }
};
inline str operator""_s(const char *s, size_t n) { return {}; }
str::operator const char *() const { return nullptr; }
}
"#,
        expect![[r#"
            namespace pybind11 L2-25 `namespace pybind11`
              struct pybind11::type_caster L3-3 `template <typename T, typename SFINAE = void> struct type_caster`
              struct pybind11::type_caster L4-5 @5 `template <typename Type, typename Alloc> struct type_caster<std::vector<Type, Alloc>> : list_caster<std::vector<Type, Alloc>, Type>`
              class pybind11::type_caster L6-9 `template <> class type_caster<bool>`
                method pybind11::type_caster::load L8-8 `bool load(handle src, bool)`
              struct pybind11::process_attribute L11-13 `template <> struct process_attribute<name> : process_attribute_default<name>`
                method pybind11::process_attribute::init L12-12 `static void init(const name &n, function_record *r)`
              class pybind11::str L14-22 `class str`
                method pybind11::str::operator std::string L16-16 `operator std::string() const`
                method pybind11::str::operator std::string_view L17-17 `explicit operator std::string_view() const`
                method pybind11::str::operator bool L18-18 `operator bool() const noexcept`
                method pybind11::str::operator+= L19-19 `str &operator+=(const str &o);`
                method pybind11::str::operator+ L20-20 `str operator+(const str &a, const str &b)`
                method pybind11::str::operator() L21-21 `bool operator()(int x) const`
              function pybind11::operator""_s L23-23 `inline str operator""_s(const char *s, size_t n)`
              method pybind11::str::operator const char * L24-24 `str::operator const char *() const`
        "#]],
    );
}

#[test]
fn cpp_macro_lines_where_members_go_are_masked() {
    // Issue 32, against ctags on pybind11's headers: a macro alone on its line
    // before a member (`PYBIND11_DEPRECATED(..)`, `PYBIND11_WARNING_POP`), members
    // a macro expands to with an expression among its arguments, or a last member
    // without its `;` were read as declarations that do not end, and the parser's
    // recovery took the class along: `class object : public handle` became a
    // function `object`, and the specializations after such a line were lost.
    check(
        Language::Cpp,
        r#"
PYBIND11_NAMESPACE_BEGIN(PYBIND11_NAMESPACE)
class object : public handle {
public:
    object() = default;
    PYBIND11_DEPRECATED("Use reinterpret_borrow<object>() or reinterpret_steal<object>()")
    object(handle h, bool is_borrowed) : handle(h) {}
    template <typename... Args>
    PYBIND11_DEPRECATED("call(...) was deprecated in favor of operator()(...)")
    object call(Args &&...args) const { return {}; }
};
template <typename Type>
struct optional_caster {
    bool load(handle src, bool convert) { return true; }
    PYBIND11_TYPE_CASTER(Type, const_name("Optional[") + value_conv::name + const_name("]"));
};
template <template <typename...> class V, typename... Ts>
struct variant_caster<V<Ts...>> {
    bool load(handle src, bool convert) { return true; }
};
class args : public tuple {
    PYBIND11_OBJECT_DEFAULT(args, tuple, PyTuple_Check)
};
PYBIND11_WARNING_POP
template <typename Type>
struct type_caster<Type, typename eigen_tensor_helper<Type>::ValidType> {
    static handle cast(Type &&src, return_value_policy policy, handle parent);
};
template <size_t N>
struct npy_format_descriptor<std::array<char, N>> {
    PYBIND11_DECL_CHAR_FMT
};
PYBIND11_NAMESPACE_END(PYBIND11_NAMESPACE)
"#,
        expect![[r#"
            class object L3-11 `class object : public handle`
              method object::object L5-5 `object() = default;`
              method object::object L7-7 `object(handle h, bool is_borrowed) : handle(h)`
              method object::call L8-10 @10 `template <typename... Args> PYBIND11_DEPRECATED("call(...) was deprecated in favor of operator()(...)") object call(Args &&...args) const`
            struct optional_caster L12-16 @13 `template <typename Type> struct optional_caster`
              method optional_caster::load L14-14 `bool load(handle src, bool convert)`
            struct variant_caster L17-20 @18 `template <template <typename...> class V, typename... Ts> struct variant_caster<V<Ts...>>`
              method variant_caster::load L19-19 `bool load(handle src, bool convert)`
            class args L21-23 `class args : public tuple`
            struct type_caster L25-28 @26 `template <typename Type> struct type_caster<Type, typename eigen_tensor_helper<Type>::ValidType>`
              method type_caster::cast L27-27 `static handle cast(Type &&src, return_value_policy policy, handle parent);`
            struct npy_format_descriptor L29-32 @30 `template <size_t N> struct npy_format_descriptor<std::array<char, N>>`
        "#]],
    );
}

#[test]
fn cpp_a_macro_before_a_templated_return_type_is_no_scope() {
    // Issue 32: with a (lower-case, so unmasked) macro before it, the grammar reads
    // the return type `Result<A::Value>` as the scope of `Result<A::Doc>::get`, and
    // the two ran together: `lib::ResultResult::get`, the method's class `Result`
    // of the return type.
    let src = r#"
namespace lib {
really_inline Result<A::Value> Result<A::Doc>::get(int x) noexcept { return {}; }
template <typename A> class Doc { Iter *it_; };
really_inline Value<A::V> Doc<A::D>::at(int i) noexcept { return it_->next(); }
}
"#;
    check(
        Language::Cpp,
        src,
        expect![[r#"
            namespace lib L2-6 `namespace lib`
              method lib::Result::get L3-3 `really_inline Result<A::Value> Result<A::Doc>::get(int x) noexcept`
              class lib::Doc L4-4 `template <typename A> class Doc`
              method lib::Doc::at L5-5 `really_inline Value<A::V> Doc<A::D>::at(int i) noexcept`
            error_nodes: 2
        "#]],
    );
    check_receivers(
        Language::Cpp,
        src,
        expect![[r#"
        5 next: Iter
    "#]],
    );
}

#[test]
fn cpp_a_macro_before_a_return_type_ending_its_line_or_a_destructor_is_masked() {
    // Issue 32 (pybind11): the macro was read as the return type and the real one
    // as the name.
    check(
        Language::Cpp,
        r#"
PYBIND11_NOINLINE value_and_holder
instance::get_value_and_holder(const type_info *find_type, bool throw_if_missing) {
    return {};
}
class type_caster_generic {
public:
    PYBIND11_NOINLINE static std::pair<const void *, const type_info *>
    src_and_type(const void *src, const std::type_info &cast_type) {
        return {src, nullptr};
    }
};
class gil_scoped_acquire {
public:
    PYBIND11_NOINLINE ~gil_scoped_acquire() { dec_ref(); }
    PYBIND11_DTOR_CONSTEXPR ~gil_scoped_release() = default;
};
"#,
        expect![[r#"
            method instance::get_value_and_holder L2-5 @3 `value_and_holder instance::get_value_and_holder(const type_info *find_type, bool throw_if_missing)`
            class type_caster_generic L6-12 `class type_caster_generic`
              method type_caster_generic::src_and_type L8-11 @9 `static std::pair<const void *, const type_info *> src_and_type(const void *src, const std::type_info &cast_type)`
            class gil_scoped_acquire L13-17 `class gil_scoped_acquire`
              method gil_scoped_acquire::~gil_scoped_acquire L15-15 `~gil_scoped_acquire()`
              method gil_scoped_acquire::~gil_scoped_release L16-16 `~gil_scoped_release() = default;`
        "#]],
    );
}

#[test]
fn cpp_header_names_in_conditions_leave_the_defines_inside() {
    // Issue 32: `__has_include(<optional>)` is no expression to the grammar, and
    // the error took pybind11's `#define PYBIND11_HAS_OPTIONAL 1` along.
    check(
        Language::Cpp,
        r#"
#ifdef __has_include
#    if defined(PYBIND11_CPP17) && __has_include(<optional>)
#        define PYBIND11_HAS_OPTIONAL 1
#    endif
#    if defined(PYBIND11_CPP14) && (__has_include(<experimental/optional>) && \
                                 !__has_include(<optional>))
#        define PYBIND11_HAS_EXP_OPTIONAL 1
#    endif
#endif
"#,
        expect![[r#"
            constant PYBIND11_HAS_OPTIONAL L4-4 `# define PYBIND11_HAS_OPTIONAL 1`
            constant PYBIND11_HAS_EXP_OPTIONAL L8-8 `# define PYBIND11_HAS_EXP_OPTIONAL 1`
        "#]],
    );
}

#[test]
fn cpp_conditionals_that_split_a_declaration_are_read_as_their_last_branch() {
    // Issue 32 (pybind11) and issue 24's leveldb misses: `#if` .. `#endif` inside a
    // declaration, an initializer list or a call is no syntax the grammar knows,
    // and its recovery took the declarations around along: the operator and its
    // namespace, the struct, every class after `Limiter` in env_posix.cc.
    check(
        Language::Cpp,
        r#"
inline namespace literals {
constexpr arg
#if !defined(__clang__) && defined(__GNUC__) && __GNUC__ < 5
operator"" _a // gcc 4.8.5 insists on having a space (hard error).
#else
operator""_a // clang 17 generates a deprecation warning if there is a space.
#endif
    (const char *name, size_t) {
    return arg(name);
}
}
struct func_handle {
    function f;
#if !(defined(_MSC_VER) && _MSC_VER == 1916)
    explicit
#endif
        func_handle(function &&f_) noexcept : f(std::move(f_)) {}
#ifdef Py_GIL_DISABLED
    std::atomic_bool
#else
    bool
#endif
        is_initialized_{false};
};
class Limiter {
 public:
  Limiter(int max_acquires)
      :
#if !defined(NDEBUG)
        max_acquires_(max_acquires),
#endif  // !defined(NDEBUG)
        acquires_allowed_(max_acquires) {
  }
  template <typename Class>
  void execute(Class &cl) && {
#if defined(PYBIND11_CPP14)
      cl.def("__init__", [func = std::move(class_factory)]
#else
      auto &func = class_factory;
      cl.def("__init__", [func]
#endif
          (value_and_holder &v_h) { func(v_h); });
  }
};
class PosixEnv {
 public:
  PosixEnv();
};
"#,
        expect![[r#"
            namespace literals L2-12 `inline namespace literals`
              function literals::operator""_a L3-11 @7 `constexpr arg #if !defined(__clang__) && defined(__GNUC__) && __GNUC__ < 5 operator"" _a // gcc 4.8.5 insists on having a space (hard error). #else operator""_a // clang 17 generates a deprecation warning if there is a space. #endif (const char *name, size_t)`
            struct func_handle L13-25 `struct func_handle`
              method func_handle::func_handle L16-18 @18 `explicit #endif func_handle(function &&f_) noexcept : f(std::move(f_))`
            class Limiter L26-45 `class Limiter`
              method Limiter::Limiter L28-34 `Limiter(int max_acquires) : #if !defined(NDEBUG) max_acquires_(max_acquires), #endif // !defined(NDEBUG) acquires_allowed_(max_acquires)`
              method Limiter::execute L35-44 @36 `template <typename Class> void execute(Class &cl) &&`
            class PosixEnv L46-49 `class PosixEnv`
              method PosixEnv::PosixEnv L48-48 `PosixEnv();`
        "#]],
    );
    // Between declarations, both branches stay for the grammar.
    let src = "#ifdef _WIN32\nint f(HANDLE h) { return 0; }\n#else\nint f(int fd) { return 0; }\n#endif\n";
    assert_eq!(mask::mask_macros(src.as_bytes()).as_ref(), src.as_bytes());
}

#[test]
fn cpp_macro_calls_in_function_bodies_and_macro_definitions_are_not_masked() {
    // The grammar reads these: calls in a body (whose arguments hold references),
    // a function-like definition, a macro standing for a return type, and a member
    // declaration ctags reports too.
    for src in [
        "void f() {\n    PYBIND11_WARNING_DISABLE_MSVC(4127)\n    ASSERT_OK(db->Put(k, v));\n    EXPECT_EQ(a, b)\n        << s;\n}\n",
        "TEST(DBTest, Empty) {\n  ASSERT_TRUE(db_ != nullptr);\n}\n",
        "GIT_EXTERN(int)\ngit_repository_open(git_repository **out, const char *path);\n",
        "class set : public object {\n    PYBIND11_OBJECT_CVT(set, object, PySet_Check, PySet_New)\n    bool empty() const;\n};\n",
        "namespace n {\nPYBIND11_RUNTIME_EXCEPTION(stop_iteration, PyExc_StopIteration);\n}\n",
    ] {
        assert_eq!(mask::mask_macros(src.as_bytes()).as_ref(), src.as_bytes(), "{src}");
    }
}

#[test]
fn csharp_explicit_interface_members_and_conversion_operators_are_definitions() {
    // Issue 24: against ctags on Newtonsoft.Json, `operator JToken` was named
    // `JToken` (read as a constructor of that type) and explicit interface
    // implementations need their member name.
    check(
        Language::CSharp,
        r#"
namespace Newtonsoft.Json.Linq
{
    public partial class JObject : JContainer, IDictionary<string, JToken?>, ICustomTypeDescriptor, IDisposable
    {
        public static implicit operator JToken(JObject o) => o;
        public static explicit operator bool(JObject value) => value.HasValues;
        public static explicit operator checked int(JObject value) => 0;
        void IDisposable.Dispose() { }
        bool ICollection<KeyValuePair<string, JToken?>>.IsReadOnly => false;
        void ICollection<KeyValuePair<string, JToken?>>.Add(KeyValuePair<string, JToken?> item) { }
        AttributeCollection ICustomTypeDescriptor.GetAttributes() { return AttributeCollection.Empty; }
        event EventHandler IWatcher.Changed { add { } remove { } }
        JToken? IDictionary<string, JToken?>.this[string key] { get => null; set { } }
        public static JObject operator +(JObject a, JObject b) => a;
    }
}
"#,
        expect![[r#"
            namespace Newtonsoft.Json.Linq L2-17 `namespace Newtonsoft.Json.Linq`
              class Newtonsoft.Json.Linq.JObject L4-16 `public partial class JObject : JContainer, IDictionary<string, JToken?>, ICustomTypeDescriptor, IDisposable`
                method Newtonsoft.Json.Linq.JObject.operator JToken L6-6 `public static implicit operator JToken(JObject o)`
                method Newtonsoft.Json.Linq.JObject.operator bool L7-7 `public static explicit operator bool(JObject value)`
                method Newtonsoft.Json.Linq.JObject.operator int L8-8 `public static explicit operator checked int(JObject value)`
                method Newtonsoft.Json.Linq.JObject.Dispose L9-9 `void IDisposable.Dispose()`
                property Newtonsoft.Json.Linq.JObject.IsReadOnly L10-10 `bool ICollection<KeyValuePair<string, JToken?>>.IsReadOnly => false;`
                method Newtonsoft.Json.Linq.JObject.Add L11-11 `void ICollection<KeyValuePair<string, JToken?>>.Add(KeyValuePair<string, JToken?> item)`
                method Newtonsoft.Json.Linq.JObject.GetAttributes L12-12 `AttributeCollection ICustomTypeDescriptor.GetAttributes()`
                property Newtonsoft.Json.Linq.JObject.Changed L13-13 `event EventHandler IWatcher.Changed`
                property Newtonsoft.Json.Linq.JObject.this L14-14 `JToken? IDictionary<string, JToken?>.this[string key]`
                method Newtonsoft.Json.Linq.JObject.operator+ L15-15 `public static JObject operator +(JObject a, JObject b)`
        "#]],
    );
}

#[test]
fn a_long_run_of_line_doc_comments_is_read_in_linear_time() {
    // Found by scripts/bench_superlinear.py: the doc comment above a definition was
    // gathered by walking previous siblings, each step costing the sibling's index
    // (a Rust `///` block of 8,000 lines took 1.3 s to index, 32,000 lines 5.1 s).
    for (lang, src) in [
        (
            Language::Rust,
            format!("/// Summary.\n{}fn f() {{}}\n", "/// more text\n".repeat(20_000)),
        ),
        (
            Language::CSharp,
            format!(
                "class C {{\n/// <summary>\n/// Summary.\n{}/// </summary>\nvoid F() {{}}\n}}\n",
                "/// more text\n".repeat(20_000)
            ),
        ),
    ] {
        let started = std::time::Instant::now();
        let a = analyze(lang, src.as_bytes());
        let f = a.definitions.last().unwrap();
        assert_eq!(f.doc.as_deref(), Some("Summary."), "{lang:?}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{lang:?}: {:?}",
            started.elapsed()
        );
    }
}
