// Package docs holds the project's documentation, one page per topic, and
// the tests that keep it true. contract.md is the requirements table of
// the architecture documents, whose proofs contract_test.go holds to the
// repository (every golden folder, test function, documentation section
// and file it names must exist, and every requirement virtc holds must
// name a golden or a test). docs_test.go runs the examples of README.md
// and the pages (fenced blocks marked run, compile, file=, from= or
// norun: testing.md, "The docs test") and checks their links.
package docs
