package emit

// ReferenceWrite is the JSON-based writer the encoder must match, for the
// external tests.
var ReferenceWrite = referenceWrite

// DecodeGeneric is Generic's JSON reader, for the external tests.
var DecodeGeneric = decodeGeneric
