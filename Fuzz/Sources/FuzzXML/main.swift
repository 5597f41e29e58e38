import FuzzSupport
import Readers

let specs = [
    XMLRecordSpec(
        path: "/a/b", fields: [("id", "@id"), ("x", "x"), ("deep", "c/d"), ("attr", "c/@e"), ("text", ".")],
        children: [
            XMLRecordSpec(
                path: "c", kind: "c", fields: [("e", "@e"), ("t", ".")],
                children: [XMLRecordSpec(path: "d", kind: "d", fields: [("t", "."), ("f", "@f")])])
        ]),
    XMLRecordSpec(path: "/n:a/n:b", fields: [("id", "@n:id"), ("x", "n:x")]),
    // Records inside records of another spec.
    XMLRecordSpec(path: "/a/b/c/d", fields: [("t", "."), ("g", "g/@h")]),
]

fuzz { data, count in
    let (_, source) = split(data, count)
    guard var reader = try? XMLReader(source: source, specs: specs, namespaces: ["n": "urn:n"]) else { return 0 }
    drain(&reader)
    return 0
}
