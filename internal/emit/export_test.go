package emit

// ReferenceWrite is the JSON-based writer the encoder must match, for the
// external tests.
var ReferenceWrite = referenceWrite
