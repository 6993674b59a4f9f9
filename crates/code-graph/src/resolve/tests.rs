//! Import resolution on multi-file fixtures: one `//- path` fixture, one expectation.

use expect_test::{Expect, expect};

use super::*;

fn check(fixture: &str, expect: Expect) {
    let (project, manifests) = crate::fixture::project_and_manifests(fixture);
    let resolved = resolve_imports(&project, &manifests);
    let mut out = String::new();
    for (f, imports) in resolved.iter().enumerate() {
        for imp in imports {
            let target = match &imp.target {
                ImportTarget::Files(fs) if fs.is_empty() => "in scope".to_owned(),
                ImportTarget::Files(fs) => fs
                    .iter()
                    .map(|&id| project.file(id).path.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                ImportTarget::External(e) => format!("external {e}"),
            };
            let names: Vec<String> = imp
                .names
                .iter()
                .map(|(n, a)| if n == a { n.clone() } else { format!("{n} as {a}") })
                .collect();
            out.push_str(&format!(
                "{}:{} {} -> {}",
                project.file(f as u32).path,
                imp.line,
                imp.module,
                target
            ));
            if !names.is_empty() {
                out.push_str(&format!(" [{}]", names.join(", ")));
            }
            out.push('\n');
        }
    }
    expect.assert_eq(&out);
}

#[test]
fn python_packages_relative_imports_and_externals() {
    check(
        r#"
        //- src/pkg/__init__.py
        from .core import Engine
        //- src/pkg/core.py
        import os
        from . import util
        from .sub.deep import helper as h, other
        from ..outside import x
        //- src/pkg/util.py
        import pkg.core
        from pkg import core
        //- src/pkg/sub/__init__.py
        //- src/pkg/sub/deep.py
        from ...pkg import util
        import numpy as np
        //- tests/test_core.py
        from pkg.core import Engine
        import pkg.sub.deep
        "#,
        expect![[r#"
            src/pkg/__init__.py:1 .core -> src/pkg/core.py [Engine]
            src/pkg/core.py:1 os -> external os [os]
            src/pkg/core.py:2 . -> src/pkg/util.py, src/pkg/__init__.py [util]
            src/pkg/core.py:3 .sub.deep -> src/pkg/sub/deep.py [helper as h, other]
            src/pkg/core.py:4 ..outside -> external outside [x]
            src/pkg/util.py:1 pkg.core -> src/pkg/core.py [pkg.core as pkg]
            src/pkg/util.py:2 pkg -> src/pkg/core.py, src/pkg/__init__.py [core]
            src/pkg/sub/deep.py:1 ...pkg -> src/pkg/util.py, src/pkg/__init__.py [util]
            src/pkg/sub/deep.py:2 numpy -> external numpy [numpy as np]
            tests/test_core.py:1 pkg.core -> src/pkg/core.py [Engine]
            tests/test_core.py:2 pkg.sub.deep -> src/pkg/sub/deep.py [pkg.sub.deep as pkg]
        "#]],
    );
}

#[test]
fn javascript_typescript_relative_index_and_tsconfig_paths() {
    check(
        r#"
        //- tsconfig.json
        {
          // comments and trailing commas are allowed here
          "compilerOptions": { "baseUrl": ".", "paths": { "@/*": ["src/*"], }, },
        }
        //- src/app.ts
        import { a, b as c } from './lib';
        import Def from "./components/Button.js";
        import * as ns from '@/util/strings';
        import React from 'react';
        import { x } from '@scope/pkg/deep';
        //- src/lib/index.ts
        export const a = 1;
        //- src/components/Button.tsx
        export default function Button() { return null; }
        //- src/util/strings.ts
        export function up(s: string) { return s; }
        //- web/main.js
        const lib = require('../src/lib');
        "#,
        expect![[r#"
            src/app.ts:1 ./lib -> src/lib/index.ts [a, b as c]
            src/app.ts:2 ./components/Button.js -> src/components/Button.tsx [default as Def]
            src/app.ts:3 @/util/strings -> src/util/strings.ts [* as ns]
            src/app.ts:4 react -> external react [default as React]
            src/app.ts:5 @scope/pkg/deep -> external @scope/pkg [x]
            web/main.js:1 ../src/lib -> src/lib/index.ts
        "#]],
    );
}

#[test]
fn javascript_workspace_packages_resolve_to_their_source() {
    check(
        r#"
        //- packages/core/package.json
        { "name": "@acme/core", "main": "./dist/index.js", "types": "./dist/index.d.ts" }
        //- packages/core/src/index.ts
        export function total() { return 1; }
        //- packages/core/src/money/format.ts
        export function fmt() { return ""; }
        //- packages/core/index.js
        module.exports = require("./dist/index.js");
        //- packages/ui/package.json
        { "name": "ui-kit", "exports": { ".": { "import": "./lib/main.mjs" } } }
        //- packages/ui/lib/main.mjs
        export const Button = 1;
        //- packages/broken/package.json
        { "name": "broken", oops
        //- node_modules/left-pad/package.json
        { "name": "left-pad", "main": "index.js" }
        //- node_modules/left-pad/index.js
        module.exports = function leftPad() {};
        //- packages/web/src/app.ts
        import { total } from "@acme/core";
        import { fmt } from "@acme/core/money/format";
        import { Button } from "ui-kit";
        import { nope } from "@acme/core/missing";
        import left from "left-pad";
        "#,
        expect![[r#"
            packages/core/index.js:1 ./dist/index.js -> external ./dist/index.js
            packages/web/src/app.ts:1 @acme/core -> packages/core/src/index.ts [total]
            packages/web/src/app.ts:2 @acme/core/money/format -> packages/core/src/money/format.ts [fmt]
            packages/web/src/app.ts:3 ui-kit -> packages/ui/lib/main.mjs [Button]
            packages/web/src/app.ts:4 @acme/core/missing -> external @acme/core [nope]
            packages/web/src/app.ts:5 left-pad -> external left-pad [default as left]
        "#]],
    );
}

#[test]
fn rust_modules_use_paths_and_workspace_crates() {
    check(
        r#"
        //- crates/core/Cargo.toml
        [package]
        name = "my-core"
        //- crates/core/src/lib.rs
        mod parser;
        pub mod net;
        use crate::parser::{parse, Token as Tok};
        use std::collections::HashMap;
        //- crates/core/src/parser.rs
        use super::net::Client;
        use self::inner::x;
        mod inner;
        //- crates/core/src/parser/inner.rs
        pub fn x() {}
        //- crates/core/src/net/mod.rs
        pub struct Client;
        pub enum Shape { Circle }
        fn f() { use Shape::*; use Shape as S; }
        //- crates/app/src/main.rs
        use my_core::net::Client;
        use serde::Deserialize;
        //- crates/core/tests/net.rs
        use my_core::net::Client;
        mod common;
        "#,
        expect![[r#"
            crates/core/src/lib.rs:1 parser -> crates/core/src/parser.rs
            crates/core/src/lib.rs:2 net -> crates/core/src/net/mod.rs
            crates/core/src/lib.rs:3 crate::parser::{parse, Token as Tok} -> crates/core/src/parser.rs [parse, Token as Tok]
            crates/core/src/lib.rs:4 std::collections::HashMap -> external std [HashMap]
            crates/core/src/parser.rs:1 super::net::Client -> crates/core/src/net/mod.rs [Client]
            crates/core/src/parser.rs:2 self::inner::x -> crates/core/src/parser/inner.rs [x]
            crates/core/src/parser.rs:3 inner -> crates/core/src/parser/inner.rs
            crates/core/src/net/mod.rs:3 Shape::* -> in scope
            crates/core/src/net/mod.rs:3 Shape as S -> in scope [Shape as S]
            crates/app/src/main.rs:1 my_core::net::Client -> crates/core/src/net/mod.rs [Client]
            crates/app/src/main.rs:2 serde::Deserialize -> external serde [Deserialize]
            crates/core/tests/net.rs:1 my_core::net::Client -> crates/core/src/net/mod.rs [Client]
            crates/core/tests/net.rs:2 common -> external common
        "#]],
    );
}

#[test]
fn rust_crate_roots_that_cargo_toml_places_outside_src() {
    // ripgrep's layout: the root package's binary is `crates/core/main.rs`, its
    // integration tests `tests/tests.rs`, and a member crate keeps `src/`. A
    // dependency renamed in Cargo.toml (`rx = { package = "grep-regex" }`) is
    // `use`d by its new name.
    check(
        r#"
        //- Cargo.toml
        [package]
        name = "ripgrep"
        [[bin]]
        path = "crates/core/main.rs" # the binary
        name = "rg"
        [[test]]
        name = "integration"
        path = "tests/tests.rs"
        //- crates/core/main.rs
        mod flags;
        use crate::flags::HiArgs;
        use grep::Matcher;
        //- crates/core/flags/mod.rs
        mod hiargs;
        pub use self::hiargs::HiArgs;
        //- crates/core/flags/hiargs.rs
        pub struct HiArgs;
        use super::super::search;
        //- crates/core/search.rs
        pub fn run() {}
        //- tests/tests.rs
        mod util;
        //- tests/util.rs
        pub fn dir() {}
        //- crates/grep/Cargo.toml
        [package]
        name = "grep"
        [lib]
        path = "src/lib.rs"
        //- crates/grep/src/lib.rs
        pub struct Matcher;
        //- crates/regex/Cargo.toml
        [package]
        name = "grep-regex"
        [lib]
        path = "lib.rs"
        //- crates/regex/lib.rs
        mod matcher;
        //- crates/regex/matcher.rs
        use grep_regex::matcher;
        //- crates/app/Cargo.toml
        [package]
        name = "app"
        [dependencies]
        rx = { package = "grep-regex", path = "../regex" }
        //- crates/app/src/main.rs
        use rx::matcher;
        //- crates/app/tests/it.rs
        use rx::matcher;
        //- crates/app/plugin/Cargo.toml
        [package]
        name = "plugin"
        //- crates/app/plugin/src/lib.rs
        use rx::matcher;
        "#,
        expect![[r#"
            crates/core/main.rs:1 flags -> crates/core/flags/mod.rs
            crates/core/main.rs:2 crate::flags::HiArgs -> crates/core/flags/mod.rs [HiArgs]
            crates/core/main.rs:3 grep::Matcher -> crates/grep/src/lib.rs [Matcher]
            crates/core/flags/mod.rs:1 hiargs -> crates/core/flags/hiargs.rs
            crates/core/flags/mod.rs:2 self::hiargs::HiArgs -> crates/core/flags/hiargs.rs [HiArgs]
            crates/core/flags/hiargs.rs:2 super::super::search -> crates/core/search.rs [search]
            tests/tests.rs:1 util -> tests/util.rs
            crates/regex/lib.rs:1 matcher -> crates/regex/matcher.rs
            crates/regex/matcher.rs:1 grep_regex::matcher -> crates/regex/matcher.rs [matcher]
            crates/app/src/main.rs:1 rx::matcher -> crates/regex/matcher.rs [matcher]
            crates/app/tests/it.rs:1 rx::matcher -> crates/regex/matcher.rs [matcher]
            crates/app/plugin/src/lib.rs:1 rx::matcher -> external rx [matcher]
        "#]],
    );
}

#[test]
fn go_packages_through_go_mod() {
    check(
        r#"
        //- go.mod
        module example.com/shop

        go 1.21
        //- cmd/main.go
        package main

        import (
            "fmt"
            "example.com/shop/internal/cart"
        )
        //- internal/cart/cart.go
        package cart
        //- internal/cart/total.go
        package cart
        //- internal/cart/cart_test.go
        package cart
        "#,
        expect![[r#"
            cmd/main.go:4 fmt -> external fmt [fmt]
            cmd/main.go:5 example.com/shop/internal/cart -> internal/cart/cart.go, internal/cart/total.go [cart]
        "#]],
    );
}

#[test]
fn java_classes_wildcards_and_static_imports() {
    check(
        r#"
        //- src/main/java/com/acme/App.java
        package com.acme;
        import com.acme.util.Strings;
        import com.acme.model.*;
        import static com.acme.util.Strings.upper;
        import java.util.List;
        public class App {}
        //- src/main/java/com/acme/util/Strings.java
        package com.acme.util;
        public class Strings {}
        //- src/main/java/com/acme/model/User.java
        package com.acme.model;
        public class User {}
        //- src/main/java/com/acme/model/Order.java
        package com.acme.model;
        public class Order {}
        "#,
        expect![[r#"
            src/main/java/com/acme/App.java:2 com.acme.util.Strings -> src/main/java/com/acme/util/Strings.java [Strings]
            src/main/java/com/acme/App.java:3 com.acme.model -> src/main/java/com/acme/model/User.java, src/main/java/com/acme/model/Order.java
            src/main/java/com/acme/App.java:4 com.acme.util.Strings.upper -> src/main/java/com/acme/util/Strings.java [upper]
            src/main/java/com/acme/App.java:5 java.util.List -> external java.util
        "#]],
    );
}

#[test]
fn csharp_namespaces_and_c_includes() {
    check(
        r#"
        //- src/Billing/Invoice.cs
        namespace Acme.Billing { public class Invoice {} }
        //- src/App.cs
        using System;
        using Acme.Billing;
        namespace Acme { class App {} }
        //- include/lib/str.h
        int len(const char *s);
        //- src/str.c
        #include "lib/str.h"
        #include <stdio.h>
        #include "local.h"
        //- src/local.h
        #define X 1
        "#,
        expect![[r#"
            src/App.cs:1 System -> external System
            src/App.cs:2 Acme.Billing -> src/Billing/Invoice.cs
            src/str.c:1 lib/str.h -> include/lib/str.h
            src/str.c:2 stdio.h -> external stdio.h
            src/str.c:3 local.h -> src/local.h
        "#]],
    );
}

#[test]
fn jsonc_comments_and_trailing_commas() {
    assert_eq!(
        strip_jsonc("{\"a\": [1, 2,], // x\n \"b\": \"//not\", /* c */ }"),
        "{\"a\": [1, 2], \n \"b\": \"//not\"  }"
    );
}
