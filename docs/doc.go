// Package docs holds the project's documents that are more than prose:
// contract.md, the requirements table of the architecture documents, whose
// proofs contract_test.go holds to the repository (every golden folder,
// test function, README section and file it names must exist, and every
// requirement virtc holds must name a golden or a test).
package docs
