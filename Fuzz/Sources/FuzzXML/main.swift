import FuzzSupport
import Readers

let specs = [
    XMLRecordSpec(path: "/a/b", fields: [("id", "@id"), ("x", "x"), ("deep", "c/d"), ("attr", "c/@e"), ("text", ".")],
                  children: [XMLRecordSpec(path: "c", kind: "c", fields: [("e", "@e"), ("t", ".")])]),
    XMLRecordSpec(path: "/n:a/n:b", fields: [("id", "@n:id")]),
]

fuzz { data, count in
    let (_, source) = split(data, count)
    guard var reader = try? XMLReader(source: source, specs: specs, namespaces: ["n": "urn:n"]) else { return 0 }
    drain(&reader)
    return 0
}
