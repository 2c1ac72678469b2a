-- A rent roll's tenant may carry its unit's number and its customer's name and mailing
-- address, so an approved batch's letters can go to a mail merge as they are. Personal data:
-- the service shows it only to roles that may act on tenants (manager and above). Optional,
-- as rolls without them keep working.
ALTER TABLE rent_roll_tenants
    ADD COLUMN unit_id text,
    ADD COLUMN customer_name text,
    ADD COLUMN address_line1 text,
    ADD COLUMN address_line2 text,
    ADD COLUMN city text,
    ADD COLUMN region text,
    ADD COLUMN postal_code text;
