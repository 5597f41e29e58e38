/// Which elements of an XML document are records, and what their fields are.
///
/// Paths are `/`-separated element names, optionally `prefix:name` with the prefix bound in
/// `XMLReader`'s namespaces. A field is an attribute (`@id`, `customer/@ref`), the text of a child
/// element (`name`, `address/city`: all text inside it, CDATA included), or the record element's own
/// text (`.`). A missing attribute or element gives null; an empty one an empty string; when an element
/// repeats, the first one counts.
///
/// ```swift
/// let orders = RecordSpec(path: "/orders/order",
///     fields: [("number", "@id"), ("placed", "placed"), ("city", "ship-to/city")],
///     children: [RecordSpec(path: "line", kind: "line", fields: [("sku", "@sku"), ("qty", "@qty")])])
/// ```
public struct RecordSpec: Sendable {
    /// Absolute (`/orders/order`) for top-level records; relative to the parent record for children.
    public var path: String
    /// The kind of record children are reported as (`Record.kind`).
    public var kind: String?
    public var fields: [(name: String, path: String)]
    /// Repeated elements inside each record, yielded as records of their own after it.
    public var children: [RecordSpec]

    public init(
        path: String, kind: String? = nil, fields: [(name: String, path: String)], children: [RecordSpec] = []
    ) {
        self.path = path
        self.kind = kind
        self.fields = fields
        self.children = children
    }
}
