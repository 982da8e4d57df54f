import JSONDocument

// The Benchmarks package (Benchmarks/, a package of its own, so it sees only what is public)
// times the schema stage both ways. SPI, not API: a client sees these only with
// `@_spi(Benchmarks) import SchemaValidation`; they forward to the package types.

@_spi(Benchmarks)
extension JSONValue {
    /// `BundledSchema.v2Event.validate`: every violation of the v2 event schema.
    public func v2EventSchemaViolations() throws(FormatError) -> [FormatError] { try BundledSchema.v2Event.validate(self) }

    /// `V2EventFastCheck.accepts`: whether the value certainly satisfies the v2 event schema.
    public var passesV2EventFastCheck: Bool { V2EventFastCheck.accepts(self) }
}
