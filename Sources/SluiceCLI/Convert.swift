import ArgumentParser
import Pipeline

/// `sluice convert SOURCE DEST`: a store copied into another type.
struct Convert: LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a store into a new store of another type (SQLite, XML, binary).",
        usage: "sluice convert <source> <destination> [<options>]",
        discussion: """
            Every object, value and relationship is copied; objects keep their
            references where the target allows (so IDs survive a round trip). The
            source's type is read from its first bytes; the destination's from --to or
            its extension (.sqlite, .xml, .bin). The model is --model, or the one
            recorded in the source (a run records it; convert carries it along).

            Examples:
              sluice convert out/shop.sqlite out/shop.xml
              sluice convert out/shop.xml out/shop.bin
              sluice convert out/shop.bin out/again.sqlite --to sqlite
              sluice convert old.xml new.sqlite --model SampleData/shop.model.yaml

            Exit status: 0 success; 2 no model known, or a model the source was not
            written with; 3 I/O or store error (the destination exists, a damaged
            source).
            """)

    @Argument(help: "The store to copy.")
    var source: String

    @Argument(help: "The new store (must not exist).")
    var destination: String

    @Option(help: "sqlite, xml or binary (default: from the destination's extension).")
    var to: StoreTypeOption?

    @Option(help: "The model (YAML, JSON or Xcode), instead of the one stored.")
    var model: String?

    @OptionGroup var layout: LayoutOptions

    @OptionGroup var logging: LogOptions

    func run() throws {
        let count = try exitingOnFailure {
            try TargetStore.convert(
                source, to: destination, typeName: to?.rawValue, modelAt: model, layout: layout.layout?.rawValue,
                dates: layout.dates?.rawValue)
        }
        let (from, into) = (
            TargetStore.name(of: TargetStore.url(source)), TargetStore.name(of: TargetStore.url(destination))
        )
        print("Copied \(count) object\(count == 1 ? "" : "s") from \(from) to \(into).")
    }
}

/// `--to` of `sluice convert`: the store types Sluice writes.
enum StoreTypeOption: String, CaseIterable, ExpressibleByArgument {
    case sqlite, xml, binary
}
