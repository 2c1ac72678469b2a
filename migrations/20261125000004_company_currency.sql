-- The currency a company's figures are shown in (an ISO 4217 code; amounts are never
-- converted). Every existing company keeps US dollars.
ALTER TABLE companies
    ADD COLUMN currency text NOT NULL DEFAULT 'USD'
        CONSTRAINT companies_currency_iso CHECK (currency ~ '^[A-Z]{3}$');
