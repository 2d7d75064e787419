// Package readme keeps README.md's Go snippets compiling: its test writes
// every ```go block of the README into one package inside this module (so
// that the module's go.mod and go.sum pin what the snippets import, and
// nothing is downloaded) and runs go vet on it.
//
// A snippet is written as a reader would paste it, without a package
// clause or imports:
//
//   - a block of declarations only (funcs, types, vars) goes into the
//     package as it is;
//   - any other block is the body of a function returning error, whose
//     variables may go unused (a snippet shows a result it does not use);
//   - the imports are those of the packages the block names (the table
//     in readme_test.go);
//   - what the block uses without declaring it (an application's pool,
//     ctx, client, its own workflow types) is declared in
//     testdata/prelude.go, and only there.
//
// The compiler's errors name the README's lines (README.md:97:5).
package readme
