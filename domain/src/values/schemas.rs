//! OpenAPI schemas of the value types: each states the bounds its constructor enforces, so the
//! document and the parser cannot disagree on them.

use super::{
    Count, Currency, HttpUrl, Money, Percent, Quantity, Text, UnitSize, COUNT_MAX, MONEY_MAX,
};
use std::borrow::Cow;
use utoipa::openapi::schema::{ObjectBuilder, SchemaFormat, SchemaType, Type};
use utoipa::openapi::{KnownFormat, RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

fn number(description: &str, min: f64, max: Option<f64>) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::Number))
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Double)))
        .minimum(Some(min))
        .maximum(max)
        .description(Some(description))
        .into()
}

impl PartialSchema for Percent {
    fn schema() -> RefOr<Schema> {
        number("A percentage from 0 to 100.", 0.0, Some(100.0))
    }
}
impl ToSchema for Percent {}

impl PartialSchema for Money {
    fn schema() -> RefOr<Schema> {
        number(
            "An amount of money (currency per month) from 0 to 1,000,000, rounded to cents.",
            0.0,
            Some(MONEY_MAX),
        )
    }
}
impl ToSchema for Money {}

impl PartialSchema for Quantity {
    fn schema() -> RefOr<Schema> {
        number("A finite number of at least 0.", 0.0, None)
    }
}
impl ToSchema for Quantity {}

impl PartialSchema for Count {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Integer))
            .minimum(Some(0))
            .maximum(Some(f64::from(COUNT_MAX)))
            .description(Some(
                "A whole number from 0 to 10,000,000 (3.0 is read as 3).",
            ))
            .into()
    }
}
impl ToSchema for Count {}

impl PartialSchema for UnitSize {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .max_length(Some(40))
            .pattern(Some(
                r"^\s*[0-9]+(\.[0-9]+)?\s*[xX]\s*[0-9]+(\.[0-9]+)?\s*$",
            ))
            .description(Some(
                "A unit size <width>x<depth> in feet, each side above 0 and at most 1,000 \
                 (10x10, 5x7.5).",
            ))
            .examples(["10x10"])
            .into()
    }
}
impl ToSchema for UnitSize {}

impl<const MAX: usize> PartialSchema for Text<MAX> {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .min_length(Some(1))
            .max_length(Some(MAX))
            .pattern(Some(
                r"^[^\u0000-\u001F\u007F-\u009F\u061C\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]*[^\s\u0000-\u001F\u007F-\u009F\u061C\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF][^\u0000-\u001F\u007F-\u009F\u061C\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]*$",
            ))
            .description(Some(format!(
                "Text of 1 to {MAX} characters (trimmed), no control characters and no invisible text-direction or formatting characters (U+061C, U+200B, U+200E, U+200F, U+202A to U+202E, U+2060 to U+2064, U+2066 to U+2069, U+FEFF)."
            )))
            .into()
    }
}
impl<const MAX: usize> ToSchema for Text<MAX> {
    fn name() -> Cow<'static, str> {
        Cow::Owned(format!("Text{MAX}"))
    }
}

impl PartialSchema for HttpUrl {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .format(Some(SchemaFormat::Custom("uri".to_owned())))
            .max_length(Some(HttpUrl::MAX_LEN))
            .pattern(Some("^\\s*[hH][tT][tT][pP][sS]?://"))
            .description(Some(
                "An absolute http or https URL of at most 2,048 characters.",
            ))
            .into()
    }
}
impl ToSchema for HttpUrl {}

impl PartialSchema for Currency {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .pattern(Some("^[A-Z]{3}$"))
            .description(Some(
                "An ISO 4217 currency code (USD, EUR, GBP, CAD, AUD, ...). Amounts are not \
                 converted: the code says how the company's figures are shown.",
            ))
            .examples(["USD"])
            .into()
    }
}
impl ToSchema for Currency {}
