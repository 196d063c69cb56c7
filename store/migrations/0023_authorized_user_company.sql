-- An authorized user's own details, which PATCH /partner/subscriber/me/contact changes, carry a
-- company as the holder's do (the portal contact: firstname, lastname, email, phonenumber,
-- company). It was accepted and dropped for an authorized user, who had no column for it.
ALTER TABLE authorized_users ADD COLUMN company TEXT NOT NULL DEFAULT '';
