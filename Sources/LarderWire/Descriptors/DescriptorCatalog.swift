import CLarderProto
import CProtobufC

/// A set of services and every message and enum type they use, looked up by
/// full name: what reflection describes and what a generic JSON call converts.
public struct DescriptorCatalog: Sendable {
    /// The services, sorted by full name.
    public let services: [ServiceDescriptor]
    /// Message types by full name.
    public let messages: [String: MessageDescriptor]
    /// Enum types by full name.
    public let enums: [String: EnumDescriptor]

    /// The services and the types reachable from their methods' inputs and
    /// outputs (through message fields, transitively).
    public init(services: [ServiceDescriptor]) {
        var messages: [String: MessageDescriptor] = [:]
        var enums: [String: EnumDescriptor] = [:]
        var pending = services.flatMap { service in
            service.methods.flatMap { [$0.input, $0.output] }
        }
        while let message = pending.popLast() {
            guard messages.updateValue(message, forKey: message.name) == nil else { continue }
            for field in message.fields {
                if let type = field.messageType, messages[type.name] == nil { pending.append(type) }
                if let type = field.enumType { enums[type.name] = type }
            }
        }
        self.init(services: services, messages: messages, enums: enums)
    }

    private init(services: [ServiceDescriptor], messages: [String: MessageDescriptor],
                 enums: [String: EnumDescriptor]) {
        self.services = services.sorted { $0.name < $1.name }
        self.messages = messages
        self.enums = enums
    }

    /// Every service, message and enum compiled from proto/ into this build
    /// (including types no service uses, such as the envelopes).
    public static let compiled: DescriptorCatalog = {
        var count: UInt = 0
        let serviceArray = larder_proto_all_service_descriptors(&count)
        let services = (0..<Int(count)).map { ServiceDescriptor(serviceArray[$0]) }
        let messageArray = larder_proto_all_message_descriptors(&count)
        var messages: [String: MessageDescriptor] = [:]
        for index in 0..<Int(count) {
            let message = MessageDescriptor(messageArray[index])
            messages[message.name] = message
        }
        let enumArray = larder_proto_all_enum_descriptors(&count)
        var enums: [String: EnumDescriptor] = [:]
        for index in 0..<Int(count) {
            let type = EnumDescriptor(enumArray[index])
            enums[type.name] = type
        }
        return DescriptorCatalog(services: services, messages: messages, enums: enums)
    }()

    /// The message type `name` (`larder.v1.Location`; a leading dot is accepted).
    public func message(named name: String) -> MessageDescriptor? { messages[Self.trimmed(name)] }

    /// The enum type `name` (`larder.v1.MealCategory`; a leading dot is accepted).
    public func enumType(named name: String) -> EnumDescriptor? { enums[Self.trimmed(name)] }

    /// The service `name` (`larder.v1.LocationService`; a leading dot is accepted).
    public func service(named name: String) -> ServiceDescriptor? {
        let name = Self.trimmed(name)
        return services.first { $0.name == name }
    }

    /// The method at `path`: `/larder.v1.LocationService/GetLocation`, also
    /// accepted without the leading slash or with a dot before the method name.
    public func method(path: String) -> MethodDescriptor? {
        var text = Substring(path)
        if text.hasPrefix("/") { text = text.dropFirst() }
        let separator = text.lastIndex(of: "/") ?? text.lastIndex(of: ".")
        guard let separator else { return nil }
        let serviceName = String(text[..<separator])
        let methodName = String(text[text.index(after: separator)...])
        return service(named: serviceName)?.method(named: methodName)
    }

    private static func trimmed(_ name: String) -> String {
        name.hasPrefix(".") ? String(name.dropFirst()) : name
    }
}
