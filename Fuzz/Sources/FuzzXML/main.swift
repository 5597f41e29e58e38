import FuzzSupport
import Readers

let specs = [
    RecordSpec(
        path: "/a/b", fields: [("id", "@id"), ("x", "x"), ("deep", "c/d"), ("attr", "c/@e"), ("text", ".")],
        children: [
            RecordSpec(
                path: "c", kind: "c", fields: [("e", "@e"), ("t", ".")],
                children: [RecordSpec(path: "d", kind: "d", fields: [("t", "."), ("f", "@f")])])
        ]),
    RecordSpec(path: "/n:a/n:b", fields: [("id", "@n:id"), ("x", "n:x")]),
    // Records inside records of another spec.
    RecordSpec(path: "/a/b/c/d", fields: [("t", "."), ("g", "g/@h")]),
]

fuzz { data, count in
    let (_, source) = split(data, count)
    guard var reader = try? XMLReader(source: source, specs: specs, namespaces: ["n": "urn:n"]) else { return 0 }
    drain(&reader)
    return 0
}
